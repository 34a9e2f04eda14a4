package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/agentsdk"
)

// offer makes listed, a listing of the group's lister session, the
// tools the group offers, as agentsdk tools; each call goes through the
// calling organization's session. A tool listed before with the same
// description and schema keeps its agentsdk tool. A tool whose input
// schema agentsdk cannot compile is left out, with a warning: a server
// should not stop the worker for one tool.
func (g *group) offer(listed []*sdk.Tool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := g.byRemote
	g.byRemote, g.order = map[string]*agentsdk.Tool{}, nil
	taken := map[string]bool{}
	for _, t := range listed {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || bytes.Equal(schema, []byte("null")) {
			schema = []byte(`{"type":"object"}`)
		}
		name := ToolName(g.name, t.Name)
		if taken[name] {
			name = hashed(name, g.name+"\x00"+t.Name)
		}
		desc, policy := cmp.Or(t.Description, t.Title), policyOf(t)
		if old := was[t.Name]; old != nil && old.Name == name && old.Description == desc &&
			bytes.Equal(old.Parameters, schema) && old.Policy == policy {
			taken[name] = true
			g.byRemote[t.Name], g.order = old, append(g.order, t.Name)
			continue
		}
		// A remote server's call may take any time and may not be safe to
		// make twice: an activity from its first attempt (LongRunning).
		tool, remote := &agentsdk.Tool{Name: name, Description: desc, Parameters: schema, Policy: policy, Orgs: g.orgs(),
			LongRunning: true, ReadOnly: policy == agentsdk.PolicyAuto}, t.Name
		tool.Run = func(ctx context.Context, call agentsdk.ToolInvocation) (string, error) {
			if !g.lists(remote) {
				return "", fmt.Errorf("MCP server %s no longer offers %s", g.name, remote)
			}
			s, err := g.route(call.OrgID)
			if err != nil {
				return "", err
			}
			return s.call(ctx, call.OrgID, remote, call.Arguments)
		}
		if _, err := agentsdk.NewTools(tool); err != nil {
			g.log.Warn("MCP tool left out: its input schema is not usable", "tool", t.Name, "error", err)
			continue
		}
		taken[name] = true
		g.byRemote[t.Name], g.order = tool, append(g.order, t.Name)
	}
}

// lists reports whether the server still lists its tool remote. A
// host that registered the tool before a change keeps calling it: its
// registry may be fixed at start.
func (g *group) lists(remote string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.byRemote[remote] != nil
}

// tools are the tools the group offers now, in its listing's order.
func (g *group) tools() []*agentsdk.Tool {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*agentsdk.Tool, 0, len(g.order))
	for _, r := range g.order {
		out = append(out, g.byRemote[r])
	}
	return out
}

// policyOf is a tool's default policy, which the worker's toolPolicy
// overrides: auto for a tool its server says only reads, else ask — an
// MCP tool acts with the operator's credentials, so a person approves
// what it does unless the server says it changes nothing.
func policyOf(t *sdk.Tool) agentsdk.ToolPolicy {
	if a := t.Annotations; a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
		return agentsdk.PolicyAuto
	}
	return agentsdk.PolicyAsk
}

// maxToolName is the longest tool name Anthropic's and OpenAI's APIs take.
const maxToolName = 64

var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the name under which server's tool is offered:
// <server>__<tool>, with any character providers refuse replaced by '_',
// and cut to 64 characters with a hash of the whole when longer.
func ToolName(server, tool string) string {
	name := server + Separator + notInName.ReplaceAllString(tool, "_")
	if len(name) <= maxToolName {
		return name
	}
	return hashed(name, server+"\x00"+tool)
}

// hashed cuts name to leave room for a short hash of whole.
func hashed(name, whole string) string {
	sum := sha256.Sum256([]byte(whole))
	h := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), maxToolName-len(h))] + h
}

// toolsDiff says how now differs from was, by tool: added, removed or
// changed (description or schema); "" when alike.
func toolsDiff(was, now []*sdk.Tool) string {
	key := func(t *sdk.Tool) string {
		b, _ := json.Marshal(struct {
			D string
			S any
		}{t.Description, t.InputSchema})
		return string(b)
	}
	old := map[string]string{}
	for _, t := range was {
		old[t.Name] = key(t)
	}
	var changes []string
	for _, t := range now {
		k, ok := old[t.Name]
		switch {
		case !ok:
			changes = append(changes, "added "+t.Name)
		case k != key(t):
			changes = append(changes, "changed "+t.Name)
		}
		delete(old, t.Name)
	}
	for _, t := range was {
		if _, ok := old[t.Name]; ok {
			changes = append(changes, "removed "+t.Name)
		}
	}
	return strings.Join(changes, ", ")
}
