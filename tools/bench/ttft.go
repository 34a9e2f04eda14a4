package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// ttft times what Agentree adds to a model's time to first token, as a
// client sees it: from the POST of a user message to the REST gateway to
// the first token on the execution's SSE stream, minus the scripted
// model's own time to its first token. One multi-turn execution answers
// -ttft-turns messages, each with text only (no tool call); the next
// message is posted once the stream says the execution waits. The
// gateway runs in the bench's process with a pool and a Temporal client
// of its own, as `agentree gateway` does. Agentree only: the naive
// pattern has no stream to a client.
func (b *bench) ttft(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	gw, err := b.startGateway(ctx, nil)
	if err != nil {
		return err
	}
	defer gw.stop()
	a := agentree{b: b, multiTurn: true}
	p := plan{ID: b.newPlanID("ttft"), Calls: 1, Turns: c.TTFTTurns + 1,
		ModelMs: int(c.StreamModelTime / time.Millisecond), Tokens: c.StreamTokens, TokenMs: int(c.StreamTokenDelay / time.Millisecond)}
	id, err := a.start(ctx, b.queues.Agentree, p, 1<<10)
	if err != nil {
		return err
	}
	defer func() { _ = a.stop(context.WithoutCancel(ctx), id) }()
	s := gw.stream(ctx, id)
	defer s.close()
	wait := func(name string) (sseEvent, error) {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return s.next(wctx, name)
	}
	if _, err := wait("agent.waiting"); err != nil {
		return fmt.Errorf("bench: ttft: the first answer: %w", err)
	}
	own := p.firstToken(c.ModelDelay)
	var added, before []time.Duration
	for i := range c.TTFTTurns {
		sent := time.Now()
		err := gw.api.Do(ctx, http.MethodPost, "/agent-executions/"+id+"/signal", map[string]any{
			"signalName": agentsdk.SignalUserMessage, "signalValue": map[string]any{"text": fmt.Sprintf("Message %d.", i+1)},
		}, nil)
		if err != nil {
			return err
		}
		tok, err := wait("token")
		if err != nil {
			return fmt.Errorf("bench: ttft: message %d: %w", i+1, err)
		}
		added = append(added, tok.at.Sub(sent)-own)
		if began, ok := b.calls.at(p.ID, i+1); ok {
			before = append(before, began.Sub(sent))
		}
		if _, err := wait("agent.waiting"); err != nil {
			return fmt.Errorf("bench: ttft: message %d: %w", i+1, err)
		}
	}
	p50, p99 := percentile(added, .5), percentile(added, .99)
	r.add("ttft_added_p50_ms", p50)
	r.add("ttft_added_p99_ms", p99)
	t := r.table(fmt.Sprintf("ttft: user message POST to the first SSE token, minus the model's own %s to first token; %d messages to one execution through the REST gateway",
		own, c.TTFTTurns), "", "p50", "p99", "messages")
	t.row("agentree: time added", p50, p99, len(added))
	// Where it goes: before the model is called (the POST, the signal, a
	// workflow task, the model activity's start), and after its first
	// token (the stream's batching, Postgres, NOTIFY, the gateway).
	t.row("  POST to the model call", percentile(before, .5), percentile(before, .99), len(before))
	return nil
}
