package agentsdk

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// ToolPolicy says whether a tool call runs on its own, waits for a
// person's approval or is never run (seed 003 §3).
type ToolPolicy string

// The policies.
const (
	// PolicyAuto runs the call.
	PolicyAuto ToolPolicy = "auto"
	// PolicyAsk checkpoints and waits, status WAITING with reason
	// "approval", until a person approves or rejects the call.
	PolicyAsk ToolPolicy = "ask"
	// PolicyForbid never runs the call: the tool is not offered to the
	// model, and a call to it anyway is answered with an error result.
	PolicyForbid ToolPolicy = "forbid"
)

// Valid reports whether p is one of the policies.
func (p ToolPolicy) Valid() bool {
	return p == PolicyAuto || p == PolicyAsk || p == PolicyForbid
}

// Policies maps tool names or globs (path.Match syntax: `*`, `?`, `[…]`)
// to policies. An exact name wins over a glob; among globs the longest
// pattern wins, then the first in sort order.
type Policies map[string]ToolPolicy

// Lookup returns the policy p sets for the tool name, and whether it sets
// one.
func (p Policies) Lookup(name string) (ToolPolicy, bool) {
	if pol, ok := p[name]; ok {
		return pol, true
	}
	best := ""
	for pattern := range p {
		if ok, _ := path.Match(pattern, name); !ok {
			continue
		}
		if best == "" || len(pattern) > len(best) || (len(pattern) == len(best) && pattern < best) {
			best = pattern
		}
	}
	if best == "" {
		return "", false
	}
	return p[best], true
}

// Problems lists what is wrong with p: unknown policies and malformed
// patterns, naming the field as field.
func (p Policies) Problems(field string) []string {
	var problems []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			problems = append(problems, fmt.Sprintf("%s has an empty tool name", field))
			continue
		}
		if _, err := path.Match(k, ""); err != nil {
			problems = append(problems, fmt.Sprintf("%s[%q] is not a valid glob: %v", field, k, err))
		}
		if !p[k].Valid() {
			problems = append(problems, fmt.Sprintf("%s[%q] must be auto, ask or forbid; got %q", field, k, p[k]))
		}
	}
	return problems
}

// Stricter is the more restrictive of a and b (forbid > ask > auto); ""
// says nothing, so the other holds.
func Stricter(a, b ToolPolicy) ToolPolicy {
	rank := func(p ToolPolicy) int { return slices.Index([]ToolPolicy{"", PolicyAuto, PolicyAsk, PolicyForbid}, p) }
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// OrgTools is what the operator lets one organization use on a worker.
type OrgTools struct {
	// Tools, when not nil, are the only tools the organization's
	// executions may call: every other tool of the worker is forbidden to
	// it (not advertised, refused at create, never run).
	Tools []string
	// ToolPolicy is the organization's policy, per tool name or glob; what
	// it does not cover, the worker's policy decides.
	ToolPolicy Policies
}

// Operator is the operator's tool policy: the worker's, and per
// organization ID what that organization may use. It is a ceiling: an
// execution's own policy can only tighten it (PolicyFor).
type Operator struct {
	// Policy is the worker's policy, per tool name or glob.
	Policy Policies
	// Orgs are the organizations configured apart, by ID; one not in it
	// gets every tool under Policy.
	Orgs map[string]OrgTools
	// SafeCommands are bash commands that run without a person's approval
	// when bash's policy is ask (SafeCommand says how they match); they
	// never lift a forbid.
	SafeCommands []string
}

// Ceiling is the most the operator lets a call of tool name (t: the
// worker's tool, nil when it serves none) by organization org do: forbid
// for a tool not served to the organization (Tool.Orgs) or off its list; else the organization's policy,
// then the worker's, then the tool's own default (the operator's word
// overrides the tool author's), auto when none says.
func (o Operator) Ceiling(org, name string, t *Tool) ToolPolicy {
	if t != nil && !t.ServesOrg(org) {
		return PolicyForbid
	}
	return o.PolicyCeiling(org, name, t)
}

// PolicyCeiling is Ceiling by the operator's policies and lists alone,
// whichever organizations the tool is served to: what a worker records
// beside the tool's organizations (Tool.Orgs).
func (o Operator) PolicyCeiling(org, name string, t *Tool) ToolPolicy {
	if ot, ok := o.Orgs[org]; ok {
		if ot.Tools != nil && !slices.Contains(ot.Tools, name) {
			return PolicyForbid
		}
		if pol, ok := ot.ToolPolicy.Lookup(name); ok {
			return pol
		}
	}
	if pol, ok := o.Policy.Lookup(name); ok {
		return pol
	}
	if t != nil && t.Policy != "" {
		return t.Policy
	}
	return PolicyAuto
}

// PolicyFor is the policy of a call to tool name (t: the worker's tool,
// nil when it serves none) by organization org: the stricter of the
// operator's ceiling and the execution's policy (its definition's and
// request's config.toolPolicy). A tenant can only tighten: {"*": "auto"}
// lifts nothing the operator or the tool asks for or forbids. Every
// runtime, step and check resolves policies through it.
func PolicyFor(org, name string, t *Tool, execution Policies, op Operator) ToolPolicy {
	tenant, _ := execution.Lookup(name)
	return Stricter(op.Ceiling(org, name, t), tenant)
}

// ForbiddenMessage is the error a call or request naming a forbidden tool
// gets: who forbids it, in the API's terms.
func ForbiddenMessage(name string, byOperator bool) string {
	if byOperator {
		return fmt.Sprintf("tool %q is forbidden by the operator's policy", name)
	}
	return fmt.Sprintf("tool %q is forbidden by this execution's tool policy", name)
}

// Risks a tool declares, shown with a call that waits for approval.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// RiskOf is the risk a call to t carries: the tool's own, else medium.
func RiskOf(t *Tool) string {
	if t != nil && t.Risk != "" {
		return t.Risk
	}
	return RiskMedium
}

// SignalToolApproval is the signal that carries a person's decision on a
// tool call waiting for approval; its value is a Decision.
const SignalToolApproval = "toolApproval"

// WaitApproval is the reason an execution waits for tool-call decisions.
const WaitApproval = "approval"

// The decisions.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// Decision is a person's decision on a tool call (the value of a
// toolApproval signal).
type Decision struct {
	ToolCallID string `json:"toolCallId"`
	// Decision is approve or reject.
	Decision string `json:"decision"`
	// Reason is the person's reason, told to the model on a rejection.
	Reason string `json:"reason,omitempty"`
	// Always approves this tool for the rest of the execution.
	Always bool `json:"always,omitempty"`
	// Arguments, on an approval, replace the model's: the call runs with
	// them (the gateway checked them against the tool's schema).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Scope is how far an approval stands: ScopeExecution (as Always),
	// ScopeDefinition or ScopeOrg (a standing approval, stored apart).
	Scope string `json:"scope,omitempty"`
	// DecidedBy is who decided: the API key's ID.
	DecidedBy string `json:"decidedBy,omitempty"`
	// DecidedAt is when the decision was made.
	DecidedAt *time.Time `json:"decidedAt,omitempty"`
}

// The scopes of an approval.
const (
	ScopeExecution  = "execution"
	ScopeDefinition = "definition"
	ScopeOrg        = "org"
)

// DecisionRef is what workflow code learns of a decision: no reason text
// (it stays in the inbox).
type DecisionRef struct {
	SignalID   string `json:"signalId"`
	ToolCallID string `json:"toolCallId"`
	Decision   string `json:"decision"`
	Always     bool   `json:"always,omitempty"`
}
