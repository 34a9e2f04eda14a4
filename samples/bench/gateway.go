package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// restGateway is Agentree's REST gateway run in the bench's process as
// `agentree gateway` runs it: a pool and a plain Temporal client of its
// own, on a loopback port; key is an API key of the bench's organization.
type restGateway struct {
	base, key string
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

// post sends a JSON request to path and fails on any status but 200.
func (g *restGateway) post(ctx context.Context, path string, body any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: POST %s: %d %s", path, resp.StatusCode, msg)
	}
	return nil
}

// sseEvent is one Server-Sent Event and when the client had it whole.
type sseEvent struct {
	name, data string
	at         time.Time
}

// sseStream reads an event stream in the background.
type sseStream struct {
	events chan sseEvent
	close  func()
}

// stream opens path as an event stream.
func (g *restGateway) stream(ctx context.Context, path string) (*sseStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+g.key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("bench: stream %s: %d %s", path, resp.StatusCode, msg)
	}
	s := &sseStream{events: make(chan sseEvent, 1024), close: func() { cancel(); resp.Body.Close() }}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ev.at = time.Now()
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s, nil
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
