package step

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/agentree/agentree/agentsdk"
)

// A counterfactual branch (agentsdk.Config.Counterfactual) asks "what if"
// without acting twice: a tool call the original made with the same name
// and arguments is answered with the result the original's model read,
// and any other call of a tool that may change something waits for a
// person — the branch is an experiment, and its side effects are real.

// Recorded are the tool calls answered on an original's conversation.
type Recorded struct {
	calls []recordedCall
}

type recordedCall struct {
	name    string
	args    any
	text    string
	isError bool
}

// RecordedOn reads the tool calls answered on the path to leaf (RecordedIn).
func RecordedOn(ctx context.Context, store Store, orgID, leaf string) (Recorded, error) {
	path, err := store.Path(ctx, orgID, leaf)
	if err != nil {
		return Recorded{}, fmt.Errorf("step: counterfactual: original's path: %w", err)
	}
	return RecordedIn(path), nil
}

// RecordedIn are the tool calls answered on a path: each assistant
// entry's calls with the tool_result entry that answers them.
func RecordedIn(path []agentsdk.Entry) Recorded {
	results := map[string]agentsdk.Message{}
	for _, e := range path {
		if e.Type != agentsdk.EntryMessage || e.Role != agentsdk.RoleToolResult {
			continue
		}
		if m, err := e.Message(); err == nil {
			results[m.ToolCallID] = m
		}
	}
	var out Recorded
	for _, e := range path {
		if e.Type != agentsdk.EntryMessage || e.Role != agentsdk.RoleAssistant {
			continue
		}
		m, err := e.Message()
		if err != nil {
			continue
		}
		for _, tc := range m.ToolCalls() {
			r, ok := results[tc.ID]
			if !ok {
				continue
			}
			out.calls = append(out.calls, recordedCall{name: tc.Name, args: decodeArgs(tc.Arguments), text: r.Text(), isError: r.IsError})
		}
	}
	return out
}

// decodeArgs is a call's arguments as a value, so key order and spacing do
// not tell two calls apart.
func decodeArgs(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 {
		return nil
	}
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil // {} and no arguments are the same call
	}
	return v
}

// Answer is the recorded result of a call with call's name and arguments;
// ok is false when the original made none.
func (r Recorded) Answer(call agentsdk.ToolCall) (text string, isError, ok bool) {
	args := decodeArgs(call.Arguments)
	for _, c := range r.calls {
		if c.name == call.Name && reflect.DeepEqual(c.args, args) {
			return c.text, c.isError, true
		}
	}
	return "", false, false
}

// CounterfactualMeta sets the policies of msg's calls in a counterfactual
// branch: a call the original recorded runs nothing (auto: it is answered
// from the record); any other call of a tool not readOnly asks, whatever
// meta said before; a forbidden call stays forbidden and a client tool's
// call is the client's.
func CounterfactualMeta(meta AnswerMeta, msg agentsdk.Message, rec Recorded, readOnly func(name string) bool) AnswerMeta {
	// The caller's maps stay as they were.
	meta.Policies, meta.Risks = maps.Clone(meta.Policies), maps.Clone(meta.Risks)
	for _, tc := range msg.ToolCalls() {
		p := meta.Policy(tc.ID)
		if p == agentsdk.PolicyForbid || isClientCall(meta, tc.ID) {
			continue
		}
		if _, _, ok := rec.Answer(tc); ok {
			delete(meta.Policies, tc.ID)
			delete(meta.Risks, tc.ID)
			continue
		}
		if readOnly(tc.Name) {
			continue
		}
		if meta.Policies == nil {
			meta.Policies, meta.Risks = map[string]agentsdk.ToolPolicy{}, map[string]string{}
		}
		meta.Policies[tc.ID] = agentsdk.PolicyAsk
		if meta.Risks[tc.ID] == "" {
			meta.Risks[tc.ID] = agentsdk.RiskMedium
		}
	}
	return meta
}

func isClientCall(meta AnswerMeta, id string) bool {
	for _, c := range meta.Client {
		if c == id {
			return true
		}
	}
	return false
}

// counterfactualMeta is CounterfactualMeta for an answer a model wrote in
// the execution configured with cfg (unchanged outside a branch).
func (d Deps) counterfactualMeta(ctx context.Context, orgID string, cfg agentsdk.Config, msg agentsdk.Message, meta AnswerMeta) (AnswerMeta, error) {
	cf := cfg.Counterfactual
	if cf == nil || len(msg.ToolCalls()) == 0 {
		return meta, nil
	}
	rec, err := RecordedOn(ctx, d.Store, orgID, cf.Leaf)
	if err != nil {
		return meta, err
	}
	return CounterfactualMeta(meta, msg, rec, func(name string) bool {
		t, err := d.Tools.Get(name)
		return err == nil && t.ReadOnly
	}), nil
}

// recordedAnswer is the original's result for call in a counterfactual
// branch (ok false outside one, or for a call the original did not make).
func (d Deps) recordedAnswer(ctx context.Context, orgID string, cfg agentsdk.Config, call agentsdk.ToolCall) (string, bool, bool, error) {
	cf := cfg.Counterfactual
	if cf == nil {
		return "", false, false, nil
	}
	rec, err := RecordedOn(ctx, d.Store, orgID, cf.Leaf)
	if err != nil {
		return "", false, false, err
	}
	text, isError, ok := rec.Answer(call)
	return text, isError, ok, nil
}
