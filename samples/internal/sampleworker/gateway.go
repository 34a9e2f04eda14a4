package sampleworker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Gateway is a sample's REST gateway, listening and not yet serving: the
// worker's process serves it (Serve); a starter or a test reaches it with
// what Gateway.Gateway holds, an API key of the samples' organization.
type Gateway struct {
	sampleenv.Gateway
	ln     net.Listener
	opts   gateway.Options
	revoke func()
}

// Listen prepares the gateway o describes (Store, Temporal and TaskQueue
// set; Signals, when set, are accepted beside userMessage) on addr, with
// a new API key of the organization org (created if need be). The key is
// revoked when Serve returns.
func Listen(ctx context.Context, o gateway.Options, org, addr string) (*Gateway, error) {
	es := o.Store
	o2, err := es.EnsureOrg(ctx, org)
	if err != nil {
		return nil, fmt.Errorf("sampleworker: organization %q: %w", org, err)
	}
	key, rec, err := es.CreateAPIKey(ctx, o2.ID, "sample worker")
	if err != nil {
		return nil, fmt.Errorf("sampleworker: API key: %w", err)
	}
	revoke := func() { _, _ = es.RevokeAPIKey(context.WithoutCancel(ctx), o2.ID, rec.ID) }
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		revoke()
		return nil, fmt.Errorf("sampleworker: gateway address: %w", err)
	}
	if len(o.Signals) > 0 && !slices.Contains(o.Signals, agentsdk.SignalUserMessage) {
		o.Signals = append([]string{agentsdk.SignalUserMessage}, o.Signals...)
	}
	if o.Logger == nil {
		// The samples' output is the agent's: the gateway says only what
		// went wrong.
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	o.HTTPListener = ln
	return &Gateway{
		Gateway: sampleenv.Gateway{URL: "http://" + ln.Addr().String(), Org: org, Key: key, OrgID: o2.ID},
		ln:      ln, opts: o, revoke: revoke,
	}, nil
}

// Serve serves the REST API until ctx ends.
func (g *Gateway) Serve(ctx context.Context) error {
	defer g.revoke()
	if err := gateway.Run(ctx, g.opts); err != nil {
		return fmt.Errorf("sampleworker: gateway: %w", err)
	}
	return nil
}

// Close gives up a gateway that will not be served.
func (g *Gateway) Close() {
	_ = g.ln.Close()
	g.revoke()
}
