package mcp

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/agentree/agentree/agentsdk"
)

// group is one configured server: the sessions its organizations' calls
// go through. Organizations without credentials of their own share one
// session; each with its own has another, so one tenant's token is never
// used for another's call.
type group struct {
	name   string
	shared *server            // nil when every enabled organization has its own
	own    map[string]*server // by organization
	any    bool               // every organization not in own may call through shared
	named  []string           // the organizations named, sorted
	log    *slog.Logger

	mu       sync.Mutex
	byRemote map[string]*agentsdk.Tool // the offered tools, by the server's name for them
	order    []string                  // the server's names, in its listing's order
}

func newGroup(cfg Server, opts Options) *group {
	g := &group{name: cfg.Name, own: map[string]*server{}, log: opts.Logger.With("mcpServer", cfg.Name)}
	if cfg.Orgs == nil {
		g.any = true
		g.shared = newServer(cfg, opts, "")
		return g
	}
	sharedCfg, needShared := cfg, false
	for _, org := range slices.Sorted(maps.Keys(cfg.Orgs)) {
		acc := cfg.Orgs[org]
		switch {
		case org == AnyOrg:
			// Every other organization's calls use the server's own
			// credentials with these over them.
			g.any, needShared = true, true
			sharedCfg.Env, sharedCfg.Headers = over(cfg.Env, acc.Env), over(cfg.Headers, acc.Headers)
		case len(acc.Env) == 0 && len(acc.Headers) == 0:
			g.named, needShared = append(g.named, org), true
		default:
			g.named = append(g.named, org)
			own := cfg
			own.Env, own.Headers = over(cfg.Env, acc.Env), over(cfg.Headers, acc.Headers)
			g.own[org] = newServer(own, opts, org)
		}
	}
	if needShared {
		g.shared = newServer(sharedCfg, opts, "")
	}
	return g
}

// over is base with top's values set over it.
func over(base, top map[string]string) map[string]string {
	if len(top) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, top)
	return out
}

// sessions are the group's sessions, the shared one first.
func (g *group) sessions() []*server {
	var out []*server
	if g.shared != nil {
		out = append(out, g.shared)
	}
	for _, org := range slices.Sorted(maps.Keys(g.own)) {
		out = append(out, g.own[org])
	}
	return out
}

// lister is the session whose tool list the group offers.
func (g *group) lister() *server { return g.sessions()[0] }

// orgs is what the group's tools' agentsdk.Tool.Orgs holds: nil when
// every organization may call them.
func (g *group) orgs() []string {
	if g.any {
		return nil
	}
	return slices.Clone(g.named)
}

// route is the session org's calls go through, or why org may not call.
func (g *group) route(org string) (*server, error) {
	if s, ok := g.own[org]; ok {
		return s, nil
	}
	if g.shared != nil && (g.any || slices.Contains(g.named, org)) {
		return g.shared, nil
	}
	return nil, fmt.Errorf("MCP server %s is not enabled for this organization", g.name)
}
