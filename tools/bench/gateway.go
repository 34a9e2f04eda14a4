package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// restGateway is Agentree's REST gateway run in the bench's process as
// `agentree gateway` runs it: a pool and a plain Temporal client of its
// own, on a loopback port; key is an API key of the bench's organization.
type restGateway struct {
	base, key string
	api       *apiclient.Client
	stop      func()
}

// startGateway serves the gateway until stop is called; tracer, when
// set, sees every statement of its pool.
func (b *bench) startGateway(ctx context.Context, tracer pgx.QueryTracer) (*restGateway, error) {
	key, _, err := b.store.CreateAPIKey(ctx, b.org.ID, "bench-"+randomHex(4))
	if err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(b.dbURL)
	if err != nil {
		return nil, err
	}
	if tracer != nil {
		pcfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	tc, err := client.Dial(client.Options{HostPort: b.temporal, Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("bench: gateway: connect to Temporal: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tc.Close()
		pool.Close()
		return nil, err
	}
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- gateway.Run(gctx, gateway.Options{
			HTTPListener: ln, Store: entrystore.New(pool), Temporal: tc, TaskQueue: b.queues.Agentree,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}()
	g := &restGateway{base: "http://" + ln.Addr().String(), key: key, stop: func() {
		cancel()
		<-done
		tc.Close()
		pool.Close()
	}}
	if g.api, err = apiclient.New(g.base, b.org.ID, key); err != nil {
		g.stop()
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(g.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("bench: the gateway never became healthy: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sseEvent is one Server-Sent Event and when the client had it whole.
type sseEvent struct {
	name, data string
	at         time.Time
}

// sseStream reads an execution's consolidated stream in the background.
type sseStream struct {
	events chan sseEvent
	close  func()
}

// stream follows the execution's consolidated stream with apiclient.Events
// (one connection, events as sent), stamping each as it arrives.
func (g *restGateway) stream(ctx context.Context, executionID string) *sseStream {
	ctx, cancel := context.WithCancel(ctx)
	s := &sseStream{events: make(chan sseEvent, 1024), close: cancel}
	go func() {
		defer close(s.events)
		for ev, err := range g.api.Events(ctx, executionID, apiclient.EventsOptions{}) {
			if err != nil {
				return // next says the stream ended
			}
			s.events <- sseEvent{name: ev.Name, data: string(ev.Data), at: time.Now()}
		}
	}()
	return s
}

// next waits for the next event named name, skipping others.
func (s *sseStream) next(ctx context.Context, name string) (sseEvent, error) {
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return ev, fmt.Errorf("bench: the stream ended before %s", name)
			}
			if ev.name == name {
				return ev, nil
			}
		case <-ctx.Done():
			return sseEvent{}, fmt.Errorf("bench: waiting for %s: %w", name, ctx.Err())
		}
	}
}
