package step

import (
	"context"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// publisher forwards a model's deltas to the execution's stream. Live
// events are best effort: a failed publish never fails the step (the
// entries are the record); the first failure is kept for the caller.
type publisher struct {
	ctx          context.Context
	store        agentsdk.Store
	org, exec    string
	task         string
	firstFailure error
}

// newPublisher publishes the deltas of the model call task (its
// idempotency key, which every retry of the call shares).
func newPublisher(ctx context.Context, s agentsdk.Store, org, exec, task string) *publisher {
	return &publisher{ctx: ctx, store: s, org: org, exec: exec, task: task}
}

func (p *publisher) onEvent(ev agentsdk.StreamEvent) {
	var err error
	if ev.Type == agentsdk.StreamText {
		err = p.store.Publish(p.ctx, p.org, p.exec, event.Token{AgentExecutionID: p.exec, TaskExecutionID: p.task, Data: ev.Text})
	} else {
		err = p.store.Publish(p.ctx, p.org, p.exec, event.Data{AgentExecutionID: p.exec, TaskExecutionID: p.task, Data: deltaPayload(ev)})
	}
	if err != nil && p.firstFailure == nil {
		p.firstFailure = fmt.Errorf("step: publish %s: %w", ev.Type, err)
	}
}

// normaliseToolCallIDs gives every tool call of msg a non-empty ID that is
// unique within the message; providers' own IDs are kept when they are.
// deltaPayload is a model's non-text delta as a data event's payload.
func deltaPayload(ev agentsdk.StreamEvent) event.Payload {
	p := event.Payload{Type: string(ev.Type), Text: ev.Text, Delta: ev.Delta}
	if ev.ToolCall != nil {
		p.ToolCall = &event.ToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Arguments: ev.ToolCall.Arguments}
	}
	return p
}

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
