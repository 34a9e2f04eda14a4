package main

import (
	"fmt"
	"strings"
)

// mode is how each system runs its model and tool calls: the choices the
// real integrations offer. Agentree's come from its plugin's options and
// the tool's author; the naive pattern's are those of openai_agents'
// ModelActivityParameters(use_local_activity=True), for its model calls,
// and a local activity for its tools.
type mode struct {
	// ActivityModelCalls is Agentree's adapter.Options.ActivityModelCalls:
	// every model call a regular activity (false, the default: each
	// call's first attempt a local activity).
	ActivityModelCalls bool
	// ActivityToolCalls is Agentree's adapter.Options.ActivityToolCalls:
	// every tool call a regular activity (false, the default: each call's
	// first attempt a local activity, the scripted tool not being
	// agentsdk.Tool.LongRunning).
	ActivityToolCalls bool
	// NaiveLocalModelCalls and NaiveLocalTools run the naive pattern's
	// model calls and tool calls as local activities.
	NaiveLocalModelCalls, NaiveLocalTools bool
}

// benchSet is one set of the report: both systems in one mode each, every
// scenario run, every ratio judged between the two systems of the set.
type benchSet struct {
	Name  string
	About string
	Mode  mode
}

// The sets the bench knows. The scripted fetch tool stands for a quick
// lookup, which its author does not mark long-running; Agentree runs in
// its defaults in every set, where both its model and tool calls are
// local, and the naive pattern in the modes its plugins offer.
var knownSets = []benchSet{
	{"A", "each system's defaults", mode{}},
	{"B", "local model calls on both", mode{NaiveLocalModelCalls: true}},
	{"C", "everything local on both: model calls and tools", mode{NaiveLocalModelCalls: true, NaiveLocalTools: true}},
}

// setNames are the sets -sets may name: the known ones, and X, whose
// modes the flags -local-model-calls, -local-tools, -naive-local-model-calls
// and -naive-local-tools give.
var setNames = []string{"A", "B", "C", "X"}

// sets are the sets cfg names, in its order.
func (c config) sets() []benchSet {
	var out []benchSet
	for _, name := range splitComma(strings.ToUpper(c.Sets)) {
		for _, s := range knownSets {
			if s.Name == name {
				out = append(out, s)
			}
		}
		if name == "X" {
			out = append(out, benchSet{"X", "the modes the flags give", mode{
				ActivityModelCalls: !c.LocalModelCalls, ActivityToolCalls: !c.LocalTools,
				NaiveLocalModelCalls: c.NaiveLocalModelCalls, NaiveLocalTools: c.NaiveLocalTools,
			}})
		}
	}
	return out
}

// prefix begins the names of the set's figures: setA_.
func (s benchSet) prefix() string { return "set" + s.Name + "_" }

// kind names a call's kind as the report's first lines say it.
func kind(local bool) string {
	if local {
		return "local activities"
	}
	return "activities"
}

// agentree says how Agentree runs in the mode.
func (m mode) agentree() string {
	calls := "model calls' first attempts as local activities (adapter.Options{}), retries as activities"
	if m.ActivityModelCalls {
		calls = "model calls as activities (adapter.Options.ActivityModelCalls)"
	}
	tools := "tool calls' first attempts as local activities (adapter.Options{}, the tool not LongRunning; resume's worker processes excepted)"
	if m.ActivityToolCalls {
		tools = "tool calls as activities (adapter.Options.ActivityToolCalls)"
	}
	return calls + "; " + tools
}

// naive says how the naive pattern runs in the mode.
func (m mode) naive() string {
	tools := "tool calls as " + kind(m.NaiveLocalTools)
	if m.NaiveLocalTools {
		tools += " (resume's excepted)"
	}
	return "model calls as " + kind(m.NaiveLocalModelCalls) + "; " + tools
}

// agentreeFloorLocal says which floor Agentree's step is judged against:
// the local-activity floor when its model and tool calls are all local,
// the activity floor when a step holds at least one activity.
func (m mode) agentreeFloorLocal() bool { return !m.ActivityModelCalls && !m.ActivityToolCalls }

// naiveFloorLocal is the same for the naive pattern.
func (m mode) naiveFloorLocal() bool { return m.NaiveLocalModelCalls && m.NaiveLocalTools }

// describe is the set's first line in the report.
func (s benchSet) describe() string {
	return fmt.Sprintf("set %s (%s): Agentree: %s. naive: %s.", s.Name, s.About, s.Mode.agentree(), s.Mode.naive())
}
