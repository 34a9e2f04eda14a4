package main

// The concurrent scenario's conversations: a driver per system starts
// them, sends each next user message and tells when a turn is answered.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// chatDriver drives one system's multi-turn conversations.
type chatDriver interface {
	start(ctx context.Context, p plan) (string, error)
	// awaitTurn returns once the conversation answered its turn (0-based)
	// and is ready for the next message.
	awaitTurn(ctx context.Context, id string, p plan, turn int) error
	send(ctx context.Context, id, text string) error
	// finish ends the conversations once measured.
	finish(ctx context.Context, ids []string) error
}

// converseTurns runs one conversation's turns to the end of the last. sent
// holds when each turn's user message was sent (turn 0's: when the
// conversation was started).
func converseTurns(ctx context.Context, d chatDriver, p plan, think time.Duration) (id string, sent []time.Time, err error) {
	sent = append(sent, time.Now())
	if id, err = d.start(ctx, p); err != nil {
		return id, sent, err
	}
	for turn := range p.Turns {
		if turn > 0 {
			if err := pause(ctx, think); err != nil {
				return id, sent, err
			}
			sent = append(sent, time.Now())
			if err := d.send(ctx, id, fmt.Sprintf("Turn %d: go on.", turn+1)); err != nil {
				return id, sent, err
			}
		}
		if err := d.awaitTurn(ctx, id, p, turn); err != nil {
			return id, sent, fmt.Errorf("%s, turn %d: %w", id, turn+1, err)
		}
	}
	return id, sent, nil
}

// pause waits d (a user's think time; 0: none), or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// agentreeChat drives multi-turn Agentree executions.
type agentreeChat struct {
	b     *bench
	queue string
	watch *waitWatcher
	mu    sync.Mutex
	seq   map[string]int // each execution's checkpoint when last waiting
}

func (a *agentreeChat) start(ctx context.Context, p plan) (string, error) {
	return agentree{b: a.b, multiTurn: true}.start(ctx, a.queue, p, 1<<10)
}

func (a *agentreeChat) awaitTurn(ctx context.Context, id string, _ plan, _ int) error {
	a.mu.Lock()
	after := a.seq[id]
	a.mu.Unlock()
	seq, err := a.watch.await(ctx, id, after)
	a.mu.Lock()
	a.seq[id] = seq
	a.mu.Unlock()
	return err
}

func (a *agentreeChat) send(ctx context.Context, id, text string) error {
	v, _ := json.Marshal(agentsdk.UserMessage{Text: text})
	_, err := aclient.NewClient(a.b.sys.agentree, a.b.store, a.queue).Signal(ctx, a.b.org.ID, id, agentsdk.SignalUserMessage, v)
	return err
}

func (a *agentreeChat) finish(ctx context.Context, ids []string) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = agentree{b: a.b}.stop(ctx, id)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// naiveChat drives NaiveChat workflows.
type naiveChat struct {
	b     *bench
	queue string
	log   *workerLog
}

func (n naiveChat) start(ctx context.Context, p plan) (string, error) {
	in := NaiveChatInput{Turns: p.Turns, NaiveInput: NaiveInput{
		Model: scripted.Model(""), Tools: []agentsdk.ToolSpec{newTool(nil).Spec()}, MaxCalls: p.Calls,
		Messages: []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, p.prompt(1<<10))}, ToolHeartbeat: agentreeToolHeartbeat,
		LocalModelCalls: n.b.set.Mode.NaiveLocalModelCalls, LocalTools: n.b.set.Mode.NaiveLocalTools,
	}}
	run, err := n.b.sys.naive.ExecuteWorkflow(ctx, naiveStart(p.ID, n.queue), NaiveChatWorkflowName, in)
	if err != nil {
		return "", fmt.Errorf("bench: start the naive chat: %w", err)
	}
	n.b.mu.Lock()
	n.b.naiveIDs = append(n.b.naiveIDs, run.GetID())
	n.b.mu.Unlock()
	return run.GetID(), nil
}

// awaitTurn waits for the turn's answer to be complete in the worker.
func (n naiveChat) awaitTurn(ctx context.Context, _ string, p plan, turn int) error {
	_, err := n.log.await(ctx, "end", p.ID, (turn+1)*p.Calls-1)
	return err
}

func (n naiveChat) send(ctx context.Context, id, text string) error {
	return n.b.sys.naive.SignalWorkflow(ctx, id, "", agentsdk.SignalUserMessage, text)
}

// finish waits for the workflows, which end after their last turn.
func (n naiveChat) finish(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if err := n.b.sys.naive.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
			return fmt.Errorf("bench: naive chat %s: %w", id, err)
		}
	}
	return nil
}
