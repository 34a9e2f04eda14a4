package step

import (
	"encoding/json"

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
	Client []string     `json:"clientCalls,omitempty"`
	Call   *LLMCallMeta `json:"llmCall,omitempty"`
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
// is not auto.
func (d Deps) answerMeta(org string, cfg agentsdk.Config, msg agentsdk.Message) AnswerMeta {
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
		if p == agentsdk.PolicyAsk {
			t, _ := d.Tools.Get(tc.Name)
			meta.Risks[tc.ID] = agentsdk.RiskOf(t)
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
