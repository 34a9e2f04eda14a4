package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentree/agentree/internal/domain"
)

// Record is what an execution left behind, in a form both runtimes can be
// compared in: IDs replaced by their order of appearance, times dropped.
type Record struct {
	Status    string
	Entries   []string
	ToolCalls []string
	// Checkpoints are "sequence leaf state".
	Checkpoints []string
	// Events are "name payload", in publication order.
	Events []string
}

// Entry is a runtime-neutral entry.
type Entry struct {
	ID, ParentID, Type, Role, TurnID, Key string
	Content, Metadata                     json.RawMessage
}

// ToolCall is a runtime-neutral tool-call record.
type ToolCall struct {
	MessageID, ResultEntryID, ToolCallID, ToolName, Status string
	Input, Output                                          json.RawMessage
	OutputSHA256                                           string
	OutputSize                                             int64
	Truncated                                              bool
	StepNumber                                             int
}

// Event is a runtime-neutral stream event.
type Event struct {
	Name string
	Data json.RawMessage
}

// volatile are the JSON keys whose values differ from run to run.
var volatile = map[string]bool{"latencyMs": true, "durationMs": true, "createdAt": true, "startedAt": true}

// Normalize builds the Record: every entry ID and the execution ID become
// placeholders (#e1, #e2 … in arrival order; #X). Tool-call IDs are the
// model's and the same in both runtimes.
func Normalize(executionID, status string, entries []Entry, calls []ToolCall, cps []domain.Checkpoint, evs []Event) Record {
	n := &normalizer{names: map[string]string{executionID: "#X"}}
	signals := 0
	for i, e := range entries {
		n.names[e.ID] = fmt.Sprintf("#e%d", i+1)
		// A consumed signal's entry is keyed by the signal's ID.
		if id, ok := strings.CutPrefix(e.Key, "signal/"); ok {
			signals++
			n.names[id] = fmt.Sprintf("#s%d", signals)
		}
	}
	var r Record
	r.Status = status
	for _, e := range entries {
		r.Entries = append(r.Entries, n.text(fmt.Sprintf("%s<-%s %s %s turn=%s key=%s %s %s", n.names[e.ID], n.names[e.ParentID],
			e.Type, e.Role, e.TurnID, e.Key, n.json(e.Content), n.json(e.Metadata))))
	}
	for _, c := range calls {
		r.ToolCalls = append(r.ToolCalls, n.text(fmt.Sprintf("%s %s msg=%s result=%s %s in=%s out=%s sha=%t size=%d trunc=%t step=%d",
			c.ToolCallID, c.ToolName, c.MessageID, c.ResultEntryID, c.Status, n.json(c.Input), n.json(c.Output),
			c.OutputSHA256 != "", c.OutputSize, c.Truncated, c.StepNumber)))
	}
	sort.Strings(r.ToolCalls)
	for _, c := range cps {
		r.Checkpoints = append(r.Checkpoints, n.text(fmt.Sprintf("%d %s %s", c.Sequence, c.LeafEntryID, n.json(c.State))))
	}
	for _, e := range concurrentInTaskOrder(evs) {
		r.Events = append(r.Events, n.text(e.Name+" "+n.json(e.Data)))
	}
	return r
}

type normalizer struct {
	names map[string]string
}

// json re-encodes raw with volatile keys dropped (keys sorted).
func (n *normalizer) json(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "-"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(dropVolatile(v))
	return string(b)
}

func dropVolatile(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if volatile[k] {
				delete(t, k)
				continue
			}
			t[k] = dropVolatile(x)
		}
	case []any:
		for i, x := range t {
			t[i] = dropVolatile(x)
		}
	}
	return v
}

// text replaces every known ID in s, longest first.
func (n *normalizer) text(s string) string {
	ids := make([]string, 0, len(n.names))
	for id := range n.names {
		if id != "" {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, n.names[id])
	}
	return s
}

// concurrentInTaskOrder sorts each run of consecutive tool-call events
// (task.*, and data events of a tool call) by tool call, keeping each
// call's own order: calls of one answer run at once, so their events
// interleave in whatever order they happen to run.
func concurrentInTaskOrder(evs []Event) []Event {
	task := func(e Event) string {
		var v struct {
			TaskExecutionID string `json:"taskExecutionId"`
		}
		_ = json.Unmarshal(e.Data, &v)
		isTool := strings.HasPrefix(e.Name, "task.") || (e.Name == "data" && !strings.Contains(v.TaskExecutionID, "/"))
		if !isTool {
			return ""
		}
		return v.TaskExecutionID
	}
	out := append([]Event(nil), evs...)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && task(out[j]) != "" {
			j++
		}
		if j == i {
			i++
			continue
		}
		span := out[i:j]
		sort.SliceStable(span, func(a, b int) bool { return task(span[a]) < task(span[b]) })
		i = j
	}
	return out
}
