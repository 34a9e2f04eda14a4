package adapter

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/agentree/agentree/agentsdk"
)

// Remote A2A agents as sub-agents (issue 39). Options.RemoteAgents are
// the only agents a spawn_agents call may name as remote: their
// addresses and credentials stay here, on the worker. The client speaks
// A2A 0.3's JSON-RPC binding through the official Go SDK.

// checkRemoteAgents validates the remote agents and returns them with
// their defaults, by name.
func checkRemoteAgents(remotes []agentsdk.RemoteAgent) (map[string]agentsdk.RemoteAgent, error) {
	out := make(map[string]agentsdk.RemoteAgent, len(remotes))
	for _, r := range remotes {
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("adapter: Options.RemoteAgents: %w", err)
		}
		if _, dup := out[r.Name]; dup {
			return nil, fmt.Errorf("adapter: Options.RemoteAgents: %q given twice", r.Name)
		}
		out[r.Name] = r.WithDefaults()
	}
	return out, nil
}

// describeRemotes returns tools with spawn_agents' description listing the
// remote agents, so the model knows which names it may give; tools are
// unchanged without remote agents.
func describeRemotes(tools []*agentsdk.Tool, remotes map[string]agentsdk.RemoteAgent) []*agentsdk.Tool {
	if len(remotes) == 0 {
		return tools
	}
	var b strings.Builder
	b.WriteString(" Remote agents you may give a task by naming them in agents[].remote:")
	for _, name := range slices.Sorted(maps.Keys(remotes)) {
		b.WriteString(" " + name)
		if d := remotes[name].Description; d != "" {
			b.WriteString(" (" + d + ")")
		}
		b.WriteString(";")
	}
	out := slices.Clone(tools)
	for i, t := range out {
		if t.Name == agentsdk.ToolSpawnAgents {
			out[i] = &agentsdk.Tool{Name: t.Name, Description: t.Description + strings.TrimSuffix(b.String(), ";") + ".",
				Parameters: t.Parameters, Run: t.Run, Policy: t.Policy, Risk: t.Risk, LongRunning: t.LongRunning, Orgs: t.Orgs}
		}
	}
	return out
}

// credential sets a remote agent's header on every request.
type credential struct {
	header, value string
	next          http.RoundTripper
}

func (c credential) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(c.header, c.value)
	return c.next.RoundTrip(r)
}

// remoteHTTP is the HTTP client of one remote agent: its credential on
// every request, each request bounded by RequestTimeout.
func remoteHTTP(r agentsdk.RemoteAgent) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if r.Token != "" {
		v := r.Token
		if strings.EqualFold(r.Header, "Authorization") {
			v = "Bearer " + v
		}
		rt = credential{header: r.Header, value: v, next: rt}
	}
	return &http.Client{Transport: rt, Timeout: r.RequestTimeout}
}

// dialRemote reads the remote agent's card and returns a client of its
// JSON-RPC interface.
func dialRemote(ctx context.Context, r agentsdk.RemoteAgent) (*a2aclient.Client, error) {
	hc := remoteHTTP(r)
	base, path := cardAddress(r.URL)
	var opts []agentcard.ResolveOption
	if path != "" {
		opts = append(opts, agentcard.WithPath(path))
	}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base, opts...)
	if err != nil {
		return nil, fmt.Errorf("read the agent card: %w", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{Polling: true, PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

// cardAddress splits a configured URL into the base the resolver takes
// and the card's path: "" (the well-known path) unless the URL names a
// .json document.
func cardAddress(raw string) (base, path string) {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasSuffix(u.Path, ".json") {
		return raw, ""
	}
	path = u.Path
	u.Path, u.RawPath = "", ""
	return u.String(), path
}
