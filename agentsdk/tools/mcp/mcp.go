package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/agentsdk"
)

// Defaults of Server and Options.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Separator joins a server's name and its tool's name in the offered
// tool's name.
const Separator = "__"

// Server is one MCP server: a command run over stdio, or a streamable
// HTTP URL. Exactly one of Command and URL is set.
type Server struct {
	// Name prefixes the server's tools: letters, digits and '-', at most
	// 32 characters.
	Name string
	// Command is the program to run (looked up in PATH), with Args.
	Command string
	Args    []string
	// Env is added to the few variables the process inherits (see the
	// package comment).
	Env map[string]string
	// URL is the streamable HTTP endpoint; Headers are sent with every
	// request to it.
	URL     string
	Headers map[string]string
	// Timeout bounds each call, and connecting and listing the tools;
	// default DefaultTimeout.
	Timeout time.Duration
	// Orgs are the organizations (by ID) whose executions may see and
	// call the server's tools, each with the credentials its calls use;
	// AnyOrg stands for every organization not named. nil: every
	// organization, on one session.
	Orgs map[string]Access
}

// AnyOrg, as a key of Server.Orgs, enables a server for every
// organization.
const AnyOrg = "*"

// Access is how one organization's calls reach a server.
type Access struct {
	// Env and Headers are set over the server's own for this
	// organization's calls, which then have a session (and, for a
	// command, a process) of their own; empty: the session of the
	// organizations without credentials of their own.
	Env     map[string]string
	Headers map[string]string
}

// Options configure Connect.
type Options struct {
	Servers []Server
	// Logger receives restarts, tool-list changes and stdio servers'
	// stderr; default slog.Default().
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, doubling from the first to the second; defaults
	// DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// OnToolsChanged, if set, is called after a server's
	// notifications/tools/list_changed has been followed by a new listing
	// (Tools then says what is offered); it must not block.
	OnToolsChanged func()
}

// Clients are the connected servers.
type Clients struct {
	groups  []*group
	servers []*server // every group's sessions
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// CheckName says what is wrong with a server name, if anything: it must be
// letters, digits and '-', at most 32 characters, so that the tools'
// names, <server>__<tool>, split one way only and stay short.
func CheckName(name string) error {
	if !serverName.MatchString(name) {
		return fmt.Errorf("%q: use letters, digits and '-', at most 32", name)
	}
	return nil
}

// ErrRestarting is what a call to a server being reconnected fails with.
var ErrRestarting = errors.New("restarting")

// Connect connects to every server at once and lists their tools. Any
// server that cannot be reached or listed within its timeout fails it,
// naming the server, and closes the others: a misconfigured worker stops
// at start rather than offering half its tools.
func Connect(ctx context.Context, opts Options) (*Clients, error) {
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	opts.MinBackoff = cmp.Or(opts.MinBackoff, DefaultMinBackoff)
	opts.MaxBackoff = max(cmp.Or(opts.MaxBackoff, DefaultMaxBackoff), opts.MinBackoff)
	names := map[string]bool{}
	for i, s := range opts.Servers {
		switch {
		case CheckName(s.Name) != nil:
			return nil, fmt.Errorf("mcp: server %d: name %w", i, CheckName(s.Name))
		case names[s.Name]:
			return nil, fmt.Errorf("mcp: server %s is named twice", s.Name)
		case (s.Command == "") == (s.URL == ""):
			return nil, fmt.Errorf("mcp: server %s: give a command or a URL, not both or neither", s.Name)
		case s.Timeout < 0:
			return nil, fmt.Errorf("mcp: server %s: negative timeout", s.Name)
		}
		names[s.Name] = true
	}
	c := &Clients{}
	for _, s := range opts.Servers {
		s.Timeout = cmp.Or(s.Timeout, DefaultTimeout)
		g := newGroup(s, opts)
		c.groups = append(c.groups, g)
		c.servers = append(c.servers, g.sessions()...)
	}
	errs := make([]error, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		wg.Go(func() { errs[i] = s.start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	for _, g := range c.groups {
		l := g.lister()
		l.mu.Lock()
		g.offer(l.listed)
		l.onList = func(listed []*sdk.Tool) {
			g.offer(listed)
			if opts.OnToolsChanged != nil {
				opts.OnToolsChanged()
			}
		}
		l.mu.Unlock()
	}
	return c, nil
}

// Tools are the servers' tools as they list them now, server by server
// in the order given, each server's in its listing's order. A tool that
// a server stops listing is refused from then on, saying so.
func (c *Clients) Tools() []*agentsdk.Tool {
	var out []*agentsdk.Tool
	for _, g := range c.groups {
		out = append(out, g.tools()...)
	}
	return out
}

// Close ends every session, stops reconnecting and kills the stdio
// servers' processes. It is safe to call more than once.
func (c *Clients) Close() error {
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}
