package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/apiclient"
)

// probeWrite is one write the probe sent while a resource fault held or
// recovered: an agent definition created over REST.
type probeWrite struct {
	Start time.Time
	Took  time.Duration
	// Status is the gateway's answer (0: none, the request failed or timed
	// out); RetryAfter, that an error answer said when to retry.
	Status     int
	RetryAfter bool
	Acked      bool
	Slug       string
}

// probeWrites creates an agent definition every half second until ctx
// ends: what a client writing during the fault sees, and which of its
// acknowledged writes the store keeps.
func (c *cluster) probeWrites(ctx context.Context, tag string, r *resourceResult) {
	cl, err := apiclient.New(c.gatewayAddr, c.org, c.key)
	if err != nil {
		c.logf("chaos: probe: %v", err)
		return
	}
	for i := 0; ctx.Err() == nil; i++ {
		slug := fmt.Sprintf("chaos-probe-%s-%d", tag, i)
		body := map[string]any{
			"name": "chaos probe " + slug, "slug": slug,
			"models": []map[string]string{{"provider": "scripted", "modelId": "scripted-1"}},
			"config": map[string]any{"mode": "multi-turn"},
		}
		w := probeWrite{Start: time.Now(), Slug: slug}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := cl.Do(rctx, http.MethodPost, "/agent-definitions", body, nil, apiclient.IdempotencyKey(slug))
		cancel()
		if ctx.Err() != nil {
			return // cut off by the probe's end: it says nothing
		}
		w.Took = time.Since(w.Start)
		var e *apiclient.Error
		switch {
		case err == nil:
			w.Acked, w.Status = true, http.StatusCreated
		case errors.As(err, &e):
			w.Status, w.RetryAfter = e.Status, e.RetryAfter > 0
		}
		r.add(w)
		_ = sleepCtx(ctx, 500*time.Millisecond)
	}
}

// resourceFigures are one resource fault's figures.
type resourceFigures struct {
	kind                        string
	recover, agentsRecover      time.Duration
	paused, lost, acked         int
	http503, noRetryAfter, h500 int
	other                       int
	writeP50, writeMax          time.Duration
}

// checkResources checks the resource faults' expectations against the
// store: every acknowledged probe write kept (else lost), every fault
// recovered (else unrecovered), and counts the executions each paused.
func (c *cluster) checkResources(ctx context.Context, faults []*fault, found *findings) error {
	if c.res == nil {
		return nil
	}
	for _, ft := range faults {
		r := c.res.results[ft]
		if r == nil {
			continue
		}
		var acked []string
		for _, w := range r.snapshot() {
			if w.Acked {
				acked = append(acked, w.Slug)
			}
		}
		var kept []string
		if err := c.pool.QueryRow(ctx, `SELECT coalesce(array_agg(slug), '{}') FROM agent_definition WHERE slug = ANY($1)`, acked).Scan(&kept); err != nil {
			return fmt.Errorf("chaos: check the %s probe: %w", ft.Kind, err)
		}
		for _, s := range acked {
			if !slices.Contains(kept, s) {
				found.Lost++
				found.example("%s: the acknowledged write %s is not in the store", ft.Kind, s)
			}
		}
		if r.Recovered.IsZero() {
			found.Unrecovered++
			found.example("%s: not recovered: %s", ft.Kind, ft.Err)
		}
	}
	return nil
}

// figures computes one fault's figures; the paused executions are read
// from the store: progress (an entry or stream event) in the 10 s before
// the fault, none while it held, and some after.
func (c *cluster) figures(ctx context.Context, ft *fault, r *resourceResult) resourceFigures {
	fg := resourceFigures{kind: ft.Kind}
	if !r.Recovered.IsZero() {
		fg.recover = r.Recovered.Sub(r.Released)
	}
	var took []time.Duration
	for _, w := range r.snapshot() {
		took = append(took, w.Took)
		switch {
		case w.Acked:
			fg.acked++
		case w.Status == http.StatusServiceUnavailable:
			fg.http503++
			if !w.RetryAfter {
				fg.noRetryAfter++
			}
		case w.Status == http.StatusInternalServerError:
			fg.h500++
		default:
			fg.other++
		}
	}
	fg.writeP50, fg.writeMax = percentile(took, 0.5), percentile(took, 1)
	if ft.Kind == modelHang {
		fg.paused = len(r.Execs)
		fg.agentsRecover = fg.recover
		return fg
	}
	if r.Released.IsZero() {
		return fg
	}
	rows, err := c.pool.Query(ctx, `WITH progress AS (
			SELECT agent_execution_id AS id, created_at AS at FROM agent_entry
			UNION ALL SELECT agent_execution_id, created_at FROM agent_stream_event)
		SELECT id::text, min(at) FILTER (WHERE at > $2) FROM progress GROUP BY id
		HAVING count(*) FILTER (WHERE at BETWEEN $1::timestamptz - interval '10 seconds' AND $1) > 0
		   AND count(*) FILTER (WHERE at > $1::timestamptz + interval '1 second' AND at <= $2) = 0
		   AND count(*) FILTER (WHERE at > $2) > 0`, ft.At, r.Released)
	if err != nil {
		c.logf("chaos: paused executions of %s: %v", ft.Kind, err)
		return fg
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var next time.Time
		if rows.Scan(&id, &next) == nil {
			fg.paused++
			fg.agentsRecover = max(fg.agentsRecover, next.Sub(r.Released))
		}
	}
	return fg
}

// printResources writes the resource faults' figures, chaos_resources_*,
// after the report's.
func (c *cluster) printResources(w io.Writer, faults []*fault) {
	if c.res == nil {
		return
	}
	var total500, totalNoRetry int
	for _, ft := range faults {
		r := c.res.results[ft]
		if r == nil {
			continue
		}
		fg := c.figures(context.Background(), ft, r)
		total500 += fg.h500
		totalNoRetry += fg.noRetryAfter
		k := "chaos_resources_" + strings.ReplaceAll(fg.kind, "-", "_")
		fmt.Fprintf(w, "%s_recover_s=%s\n%s_agents_recover_s=%s\n%s_paused=%d\n",
			k, seconds(fg.recover), k, seconds(fg.agentsRecover), k, fg.paused)
		if ft.Kind == modelHang {
			continue // the gateway has no part in it: no writes probed
		}
		printFigures(w, []figure{
			{k + "_writes_acked", fg.acked},
			{k + "_http_503", fg.http503},
			{k + "_http_503_no_retry_after", fg.noRetryAfter},
			{k + "_http_500", fg.h500},
			{k + "_other_errors", fg.other},
			{k + "_write_p50_s", seconds(fg.writeP50)},
			{k + "_write_max_s", seconds(fg.writeMax)},
		})
	}
	fmt.Fprintf(w, "chaos_resources_http_500=%d\nchaos_resources_http_503_no_retry_after=%d\n", total500, totalNoRetry)
}
