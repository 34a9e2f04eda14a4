package step

import (
	"context"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

// Stream event names, as the SSE stream sends them (seed 000).
const (
	EventToken = "token"
	EventData  = "data"
	// A tool call runs as a task: task.started when it starts, a data
	// event of type tool_result with its outcome, then task.completed (or
	// task.failed when the model is told of an error).
	EventTaskStarted   = "task.started"
	EventTaskCompleted = "task.completed"
	EventTaskFailed    = "task.failed"
)

// publisher forwards a model's deltas to the execution's stream. Live
// events are best effort: a failed publish never fails the step (the
// entries are the record); the first failure is kept for the caller.
type publisher struct {
	ctx          context.Context
	store        agentsdk.Store
	org, exec    string
	firstFailure error
}

func newPublisher(ctx context.Context, s agentsdk.Store, org, exec string) *publisher {
	return &publisher{ctx: ctx, store: s, org: org, exec: exec}
}

func (p *publisher) onEvent(ev agentsdk.StreamEvent) {
	var err error
	if ev.Type == agentsdk.StreamText {
		err = p.store.Publish(p.ctx, p.org, p.exec, EventToken, map[string]any{"text": ev.Text})
	} else {
		err = p.store.Publish(p.ctx, p.org, p.exec, EventData, ev)
	}
	if err != nil && p.firstFailure == nil {
		p.firstFailure = fmt.Errorf("step: publish %s: %w", ev.Type, err)
	}
}

// normaliseToolCallIDs gives every tool call of msg a non-empty ID that is
// unique within the message; providers' own IDs are kept when they are.
func normaliseToolCallIDs(msg *agentsdk.Message, key string) {
	seen := map[string]bool{}
	for i := range msg.Content {
		tc := msg.Content[i].ToolCall
		if msg.Content[i].Type != agentsdk.BlockToolCall || tc == nil {
			continue
		}
		if tc.ID == "" || seen[tc.ID] {
			tc.ID = fmt.Sprintf("call_%s_%d", shortHash(key), i)
		}
		if len(tc.Arguments) == 0 {
			tc.Arguments = []byte(`{}`)
		}
		seen[tc.ID] = true
	}
}

func shortHash(s string) string {
	return digest(agentsdk.ToolCall{Name: s})[:8]
}
