package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// ToolName is the one tool both systems offer the model.
const ToolName = "fetch"

// plan is what one benchmark conversation asks of the scripted model. It
// rides in the first line of the first user message, so every worker
// process, and both systems, answer a given step the same way.
type plan struct {
	ID        string
	Calls     int
	ToolBytes int
}

const planPrefix = "[bench plan]"

// prompt is the plan's first user message, padded to size bytes.
func (p plan) prompt(size int) string {
	head := fmt.Sprintf("%s id=%s calls=%d tool_bytes=%d\n", planPrefix, p.ID, p.Calls, p.ToolBytes)
	return head + filler("The conversation so far. ", size-len(head))
}

// readPlan finds the plan in a conversation's first message.
func readPlan(msgs []agentsdk.Message) (plan, error) {
	var p plan
	if len(msgs) == 0 || len(msgs[0].Content) == 0 {
		return p, fmt.Errorf("bench: the conversation has no plan")
	}
	head, _, _ := strings.Cut(msgs[0].Content[0].Text, "\n")
	_, err := fmt.Sscanf(head, planPrefix+" id=%s calls=%d tool_bytes=%d", &p.ID, &p.Calls, &p.ToolBytes)
	if err != nil {
		return p, fmt.Errorf("bench: read plan %q: %w", head, err)
	}
	return p, nil
}

// filler is n bytes of text made of phrase, with nothing JSON escapes.
func filler(phrase string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(phrase, n/len(phrase)+1)[:n]
}

// recorder learns of every model call a worker answers: the step (the
// number of assistant messages before it) and when it began.
type recorder func(planID string, step int, at time.Time)

// newModel is the scripted model of every scenario: steps 0..Calls-2 each
// ask for one tool call, the last step answers. delay is waited per call.
func newModel(delay time.Duration, rec recorder) *scripted.Provider {
	m := scripted.New(func(step int, req agentsdk.ModelRequest) scripted.Turn {
		p, err := readPlan(req.Messages)
		if err != nil {
			return scripted.Turn{Text: "[bench] " + err.Error()}
		}
		if step >= p.Calls-1 {
			return scripted.Turn{Text: fmt.Sprintf("Done after %d model calls.", step+1), Delay: delay}
		}
		args := fmt.Sprintf(`{"step":%d,"bytes":%d}`, step, p.ToolBytes)
		return scripted.Turn{Delay: delay, ToolCalls: []agentsdk.ToolCall{
			{ID: fmt.Sprintf("call_%d", step), Name: ToolName, Arguments: []byte(args)},
		}}
	})
	m.OnCall = func(step int, req agentsdk.ModelRequest) {
		if p, err := readPlan(req.Messages); err == nil && rec != nil {
			rec(p.ID, step, time.Now())
		}
	}
	return m
}

// fetchArgs are the tool's arguments.
type fetchArgs struct {
	Step  int `json:"step"`
	Bytes int `json:"bytes"`
}

// newTool returns the fetch tool: its output is as many bytes as asked.
// block, when set, is called first and may hold the call until ctx ends.
func newTool(block func(ctx context.Context, step int)) *agentsdk.Tool {
	return agentsdk.NewTool(ToolName, "Fetches a document of the given size.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, a fetchArgs) (string, error) {
			if block != nil {
				block(ctx, a.Step)
			}
			head := fmt.Sprintf("document %d\n", a.Step)
			return head + filler("Fetched text. ", a.Bytes-len(head)), ctx.Err()
		})
}

// callLog is an in-process recorder: the model calls of each plan, by step.
type callLog struct {
	mu    sync.Mutex
	calls map[string]map[int]time.Time
}

func newCallLog() *callLog { return &callLog{calls: map[string]map[int]time.Time{}} }

func (l *callLog) record(planID string, step int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[planID] == nil {
		l.calls[planID] = map[int]time.Time{}
	}
	if _, seen := l.calls[planID][step]; !seen {
		l.calls[planID][step] = at
	}
}

// intervals are the times between the starts of consecutive model calls of
// a plan: one model call and the tool call it asked for, plus whatever the
// system does in between.
func (l *callLog) intervals(planID string) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return gaps(l.calls[planID])
}

// gaps turns step start times into the intervals between consecutive steps.
func gaps(starts map[int]time.Time) []time.Duration {
	var out []time.Duration
	for step := 1; ; step++ {
		cur, ok1 := starts[step]
		prev, ok2 := starts[step-1]
		if !ok1 || !ok2 {
			return out
		}
		out = append(out, cur.Sub(prev))
	}
}
