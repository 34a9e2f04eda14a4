package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The junk flood of issue 36: a valid client on a loopback address of its
// own sends a request every junkFloodInterval for -junk-flood-period (15
// s) on an idle gateway, then again while junkFloodClients clients on
// 127.0.0.1 send well-formed unknown keys as fast as they can.
const (
	junkFloodInterval = 20 * time.Millisecond
	junkFloodClients  = 200
	junkFloodValid    = "127.0.0.2"
	junkFloodJunk     = "127.0.0.1"
)

// statementCounter counts the statements the gateway's pool sends.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// junkFlood measures what a flood of unknown keys costs a valid client:
// its p99 under the flood over its idle p99, its answers other than 200,
// and the Postgres statements per junk request (the gateway's pool,
// counted by a tracer, less what the valid client's requests cost when
// idle). The gateway runs in the bench's process with its defaults.
func (b *bench) junkFlood(ctx context.Context, r *report, _ io.Writer) error {
	var stmts statementCounter
	gw, err := b.startGateway(ctx, &stmts)
	if err != nil {
		return err
	}
	defer gw.stop()
	path := gw.base + "/api/orgs/" + b.org.ID + "/agent-executions"
	valid := loopbackClient(junkFloodValid, 4)

	before := stmts.n.Load()
	period := b.cfg.JunkFloodPeriod
	idle, idleBad, err := pace(ctx, valid, path, gw.key, period)
	if err != nil {
		return err
	}
	perValid := float64(stmts.n.Load()-before) / float64(max(len(idle), 1))

	fctx, stop := context.WithCancel(ctx)
	junk := loopbackClient(junkFloodJunk, junkFloodClients)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range junkFloodClients {
		wg.Go(func() {
			for fctx.Err() == nil {
				if _, err := get(fctx, junk, path, junkKey()); err == nil {
					sent.Add(1)
				}
			}
		})
	}
	before = stmts.n.Load()
	flooded, floodBad, err := pace(ctx, valid, path, gw.key, period)
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	junkStmts := max(float64(stmts.n.Load()-before)-perValid*float64(len(flooded)), 0)

	idleP99, floodP99 := percentile(idle, .99), percentile(flooded, .99)
	ratio := float64(floodP99) / float64(max(idleP99, time.Microsecond))
	r.add("junk_flood_valid_p99_ratio", ratio)
	r.add("junk_flood_valid_non200", idleBad+floodBad)
	// Four decimals: the target is 0.01, which two would round onto.
	r.add("junk_flood_pg_queries_per_request", floatOf(junkStmts/float64(max(sent.Load(), 1)), 4))
	r.add("junk_flood_junk_requests_per_s", float64(sent.Load())/period.Seconds())
	t := r.table(fmt.Sprintf("junk_flood: a valid client (%s) every %s for %s, idle, then while %d clients (%s) send unknown keys",
		junkFloodValid, junkFloodInterval, period, junkFloodClients, junkFloodJunk), "", "p50", "p99", "non-200")
	t.row("valid client, idle", percentile(idle, .5), idleP99, idleBad)
	t.row("valid client, flooded", percentile(flooded, .5), floodP99, floodBad)
	// Issue 36's targets.
	r.target("junk_flood_valid_p99_ratio <= 5", func(f figures) (bool, string) {
		return f.num("junk_flood_valid_p99_ratio") <= 5, f.text("junk_flood_valid_p99_ratio")
	})
	r.target("junk_flood_valid_non200 = 0", func(f figures) (bool, string) {
		return f.num("junk_flood_valid_non200") == 0, f.text("junk_flood_valid_non200")
	})
	r.target("junk_flood_pg_queries_per_request <= 0.01", func(f figures) (bool, string) {
		return f.num("junk_flood_pg_queries_per_request") <= 0.01, f.text("junk_flood_pg_queries_per_request")
	})
	return nil
}

// pace sends GET url with key every junkFloodInterval for period and
// returns each answer's latency and how many were not 200.
func pace(ctx context.Context, c *http.Client, url, key string, period time.Duration) ([]time.Duration, int, error) {
	var lat []time.Duration
	bad := 0
	tick := time.NewTicker(junkFloodInterval)
	defer tick.Stop()
	end := time.Now().Add(period)
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-tick.C:
		}
		start := time.Now()
		status, err := get(ctx, c, url, key)
		lat = append(lat, time.Since(start))
		if err != nil || status != http.StatusOK {
			bad++
		}
	}
	return lat, bad, nil
}

// get sends GET url with key and reads the answer through.
func get(ctx context.Context, c *http.Client, url, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// loopbackClient is an HTTP client whose connections leave from local (any
// 127/8 address is loopback on Linux), keeping up to conns open.
func loopbackClient(local string, conns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
}

// junkKey is a well-formed key nobody has: "agt_<8 hex>_<64 hex>".
func junkKey() string {
	var b [36]byte
	_, _ = rand.Read(b[:])
	return "agt_" + hex.EncodeToString(b[:4]) + "_" + hex.EncodeToString(b[4:])
}
