package step

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// AnswerMeta is the metadata of an assistant entry that calls tools: each
// call's policy and risk, resolved when the model answered, so workflow
// code reads a recorded fact and a worker whose configuration changed
// later cannot make a replay decide differently. A call it does not name
// is auto, the default: most answers record nothing.
//
// Call is the record of the model call that wrote the answer (CallOf
// reads it whole); nil for an assistant entry a client appended.
type AnswerMeta struct {
	Policies map[string]agentsdk.ToolPolicy `json:"toolPolicies,omitempty"`
	Risks    map[string]string              `json:"toolRisks,omitempty"`
	// Client are the IDs of the calls to client tools
	// (Config.ClientTools): no worker runs them.
	Client []string `json:"clientCalls,omitempty"`
	// SafeCalls are calls whose policy is ask that run without waiting:
	// bash commands on the operator's safe list (Operator.SafeCalls).
	SafeCalls []string `json:"safeCalls,omitempty"`
	// Standing are calls whose policy is ask that a standing approval
	// (per definition or organization) lets run without waiting: the
	// approval's ID by call ID.
	Standing map[string]string `json:"standingApprovals,omitempty"`
	Call     *LLMCallMeta      `json:"llmCall,omitempty"`
}

// preApproved reports whether call id, whose policy is ask, runs without
// waiting for a person: the safe list or a standing approval let it.
func (m AnswerMeta) preApproved(id string) bool {
	return slices.Contains(m.SafeCalls, id) || m.Standing[id] != ""
}

// stillPreApproved reports whether call, approved without waiting when
// the model answered, still is: a safe command on the operator's list as
// it is now, or a standing approval's call.
func (d Deps) stillPreApproved(m AnswerMeta, call agentsdk.ToolCall) bool {
	if slices.Contains(m.SafeCalls, call.ID) {
		return d.Policy.SafeCall(call)
	}
	return m.Standing[call.ID] != ""
}

// preApproval is the approval part of the record of call id when it was
// approved without waiting; nil otherwise.
func (m AnswerMeta) preApproval(id string, now time.Time) *agentsdk.Approval {
	switch {
	case slices.Contains(m.SafeCalls, id):
		return &agentsdk.Approval{Decision: agentsdk.DecisionApprove, DecidedBy: DecidedBySafeCommands, DecidedAt: &now}
	case m.Standing[id] != "":
		return &agentsdk.Approval{Decision: agentsdk.DecisionApprove, DecidedBy: DecidedByStandingApproval, DecidedAt: &now,
			StandingApprovalID: m.Standing[id]}
	}
	return nil
}

// Who approved a call that did not wait, as its record says.
const (
	DecidedBySafeCommands     = "safeCommands"
	DecidedByStandingApproval = "standingApproval"
)

// waitPolicy is the policy workflow code sees for call id: ask unless
// something approved it when the model answered.
func (m AnswerMeta) waitPolicy(id string) agentsdk.ToolPolicy {
	p := m.Policy(id)
	if p == agentsdk.PolicyAsk && m.preApproved(id) {
		return agentsdk.PolicyAuto
	}
	return p
}

// Policy is the recorded policy of tool call id.
func (m AnswerMeta) Policy(id string) agentsdk.ToolPolicy {
	if p := m.Policies[id]; p != "" {
		return p
	}
	return agentsdk.PolicyAuto
}

// policy is the policy of a call to the tool name by organization org in
// an execution configured with cfg.
func (d Deps) policy(org string, cfg agentsdk.Config, name string) agentsdk.ToolPolicy {
	t, _ := d.Tools.Get(name)
	return agentsdk.PolicyFor(org, name, t, cfg.ToolPolicy, d.Policy)
}

// offeredSpecs are the specs of the tools the model is told about: the
// offered worker tools, then the execution's client tools.
func (d Deps) offeredSpecs(offered []string, cfg agentsdk.Config) ([]agentsdk.ToolSpec, error) {
	specs, err := d.Tools.Specs(offered)
	if err != nil || len(cfg.ClientTools) == 0 {
		return specs, err
	}
	return append(specs, cfg.ClientTools...), nil
}

// offered are the configured tools the model is told about: all but the
// forbidden ones.
func (d Deps) offered(org string, cfg agentsdk.Config) []string {
	names := make([]string, 0, len(cfg.Tools))
	for _, n := range cfg.Tools {
		if d.policy(org, cfg, n) != agentsdk.PolicyForbid {
			names = append(names, n)
		}
	}
	return names
}

// answerMeta records the policy and risk of each of msg's tool calls that
// is not auto, and which calls whose policy is ask need not wait: a safe
// command, or a call a standing approval covers.
func (d Deps) answerMeta(ctx context.Context, org, executionID string, cfg agentsdk.Config, msg agentsdk.Message) AnswerMeta {
	var meta AnswerMeta
	for _, tc := range msg.ToolCalls() {
		if _, err := d.Tools.Get(tc.Name); err != nil && cfg.IsClientTool(tc.Name) {
			meta.Client = append(meta.Client, tc.ID)
			continue
		}
		p := d.policy(org, cfg, tc.Name)
		if p == agentsdk.PolicyAuto {
			continue
		}
		if meta.Policies == nil {
			meta.Policies, meta.Risks = map[string]agentsdk.ToolPolicy{}, map[string]string{}
		}
		meta.Policies[tc.ID] = p
		if p != agentsdk.PolicyAsk {
			continue
		}
		t, _ := d.Tools.Get(tc.Name)
		meta.Risks[tc.ID] = agentsdk.RiskOf(t)
		if d.Policy.SafeCall(tc) {
			meta.SafeCalls = append(meta.SafeCalls, tc.ID)
			continue
		}
		if d.StandingApproval == nil {
			continue
		}
		// A lookup that fails leaves the call to a person: the answer is
		// written, and the model not called again for it.
		if id, err := d.StandingApproval(ctx, org, executionID, tc); err == nil && id != "" {
			if meta.Standing == nil {
				meta.Standing = map[string]string{}
			}
			meta.Standing[tc.ID] = id
		}
	}
	return meta
}

// markLocal marks the tool calls of res whose first attempt runs as a
// local activity: every call, unless its tool is LongRunning or
// Deps.ActivityTools says none. It is not stored with the
// answer: the workflow reads it from the model call's result, recorded in
// its history, so a replay runs each call as its first run did. An
// answer read back from the store later (a segment that takes up an
// earlier one's calls) runs its calls as activities.
func (d Deps) markLocal(res *agentsdk.ModelResult) {
	for i, tc := range res.Entry.ToolCalls {
		if t, err := d.Tools.Get(tc.Name); err == nil && !t.LongRunning && !d.ActivityTools {
			res.Entry.ToolCalls[i].Local = true
		}
	}
}

// AnswerMetaOf is the AnswerMeta an assistant entry records (zero for
// entries without one).
func AnswerMetaOf(e agentsdk.Entry) AnswerMeta {
	var m AnswerMeta
	if len(e.Metadata) > 0 {
		_ = json.Unmarshal(e.Metadata, &m)
	}
	return m
}
