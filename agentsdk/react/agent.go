package react

import (
	"fmt"
	"slices"

	"github.com/agentree/agentree/agentsdk"
)

// Kind is the react agent's kind and Temporal workflow type.
const Kind = "react-agent"

// Stop reasons the react agent records on the execution.
const (
	StopFinalAnswer  = "end_turn"
	StopMaxTurns     = "max_turns"
	StopLoopDetected = "loop_detected"
	// StopMaxSteps: the execution spent its step budget and is PAUSED.
	StopMaxSteps = "max_steps"
)

// stepBudget is the change that pauses an execution at config.maxSteps.
const stepBudget = "react.step-budget"

// Options configure the agent; the zero value is the default agent.
type Options struct {
	// Kind overrides the agent's kind; empty = "react-agent".
	Kind string
	// (MaxTurns bounds the steps — model calls — that answer one user
	// input: a multi-turn agent gets a fresh budget with every message.)
	//
	// SelectModels picks the models for a turn (first answers, the rest
	// are fallbacks); nil = the execution's configured models in order.
	// It runs in workflow code and must be deterministic.
	SelectModels func(turn int, cfg agentsdk.Config) []agentsdk.ModelRef
}

// Agent is the react agent.
type Agent struct{ opts Options }

// New returns a react agent.
func New(opts Options) *Agent { return &Agent{opts: opts} }

// Changes implements agentsdk.Versioned: every change the agent's segment
// code guards with Context.Version, at its highest version.
func (a *Agent) Changes() map[string]int {
	return map[string]int{manualCompaction: 1, parallelTools: 1, toolApprovals: 1, stepBudget: 1, subAgents: 1, sleeps: 1}
}

// Kind implements agentsdk.Agent.
func (a *Agent) Kind() string {
	if a.opts.Kind != "" {
		return a.opts.Kind
	}
	return Kind
}

// RunSegment implements agentsdk.Agent.
func (a *Agent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	cfg := ctx.Config().WithDefaults()
	// Tool calls an earlier segment did not finish come first: no user
	// message may land between an answer's tool results.
	if of := ctx.State().ToolsOf; of != "" {
		assistant, err := ctx.Entry(of)
		if err != nil {
			return agentsdk.Outcome{}, err
		}
		return a.runTools(ctx, cfg, assistant)
	}
	// The leaf before a manual compaction decides what comes next: the
	// compaction entry itself asks for nothing.
	leaf := ctx.Leaf()
	if err := compactOnRequest(ctx, cfg); err != nil {
		return agentsdk.Outcome{}, err
	}
	if took, err := takeUserMessages(ctx); err != nil {
		return agentsdk.Outcome{}, err
	} else if took {
		ctx.State().InputTurn = ctx.State().Turn
		leaf = ctx.Leaf()
	}
	if leaf == nil {
		return agentsdk.Fail("the execution has no input"), nil
	}
	if leaf.Role == agentsdk.RoleAssistant {
		if len(leaf.ToolCalls) > 0 {
			return a.runTools(ctx, cfg, leaf)
		}
		return a.answered(ctx, cfg), nil
	}
	st := ctx.State()
	if st.Turn-st.InputTurn >= cfg.MaxTurns {
		return agentsdk.Complete(StopMaxTurns), nil
	}
	call := agentsdk.ModelCall{TurnID: fmt.Sprintf("turn-%d", st.Turn+1)}
	if a.opts.SelectModels != nil {
		call.Models = a.opts.SelectModels(st.Turn, cfg)
	}
	res, err := ctx.CallModel(call)
	if err != nil {
		return agentsdk.Outcome{}, err
	}
	st.Turn++
	st.AddUsage(res.Model, res.Usage)
	if len(res.Entry.ToolCalls) == 0 {
		return a.answered(ctx, cfg), nil
	}
	return a.runTools(ctx, cfg, &res.Entry)
}

// answered decides what follows a final answer.
func (a *Agent) answered(ctx agentsdk.Context, cfg agentsdk.Config) agentsdk.Outcome {
	if ctx.HasSignal(agentsdk.SignalUserMessage) {
		// A message arrived while the model answered: answer it next.
		return agentsdk.Continue()
	}
	if cfg.Mode == agentsdk.ModeMultiTurn {
		if ctx.Version(manualCompaction, 1) != agentsdk.DefaultVersion {
			return agentsdk.Wait("input", agentsdk.SignalUserMessage, agentsdk.SignalCompact)
		}
		return agentsdk.Wait("input", agentsdk.SignalUserMessage)
	}
	return agentsdk.Complete(StopFinalAnswer)
}

// parallelTools is the change that runs an answer's tool calls at once
// (Context.RunTools) rather than one after another.
const parallelTools = "react.parallel-tools"

// runTools runs the assistant entry's tool calls. When loop detection
// stops the agent, the calls not run get an error result so no tool call
// is ever left unanswered.
func (a *Agent) runTools(ctx agentsdk.Context, cfg agentsdk.Config, assistant *agentsdk.EntryRef) (agentsdk.Outcome, error) {
	if ctx.Version(parallelTools, 1) == agentsdk.DefaultVersion {
		return a.runToolsInTurn(ctx, cfg, assistant)
	}
	approvals := ctx.Version(toolApprovals, 1) != agentsdk.DefaultVersion
	st := ctx.State()
	calls := workerCallsFirst(assistant.ToolCalls)[st.ToolsDone:]
	after, stop := loopCheck(st, cfg, calls)
	run := calls
	if stop >= 0 {
		run = calls[:stop]
	}
	if approvals {
		if err := applyDecisions(ctx, assistant, run); err != nil {
			return agentsdk.Outcome{}, err
		}
	}
	for done := 0; done < len(run); {
		if run[done].Client {
			// The client's calls come last: they wait for the client's
			// outputs once the worker's calls are answered.
			pending, err := ctx.ClientResults(assistant.ID, run[done:])
			if err != nil {
				return agentsdk.Outcome{}, err
			}
			if len(pending) > 0 {
				st.ToolsOf, st.ToolsDone = assistant.ID, st.ToolsDone+done
				return agentsdk.Wait(agentsdk.WaitClientTool, agentsdk.SignalToolResult), nil
			}
			if ctx.Version(agentsdk.ChangeOneStep, 1) == agentsdk.DefaultVersion {
				st.Steps += len(run) - done
			}
			st.LastToolDigest, st.ToolRepeats = after[len(run)-1].digest, after[len(run)-1].repeats
			done = len(run)
			break
		}
		// The calls from done on that may run now: up to the first that
		// needs a person's decision, or that one alone once approved.
		n, wait, err := a.nextCalls(ctx, assistant, run[done:], approvals)
		if err != nil {
			return agentsdk.Outcome{}, err
		}
		if wait {
			st.ToolsOf, st.ToolsDone = assistant.ID, st.ToolsDone+done
			return agentsdk.Wait(agentsdk.WaitApproval, agentsdk.SignalToolApproval), nil
		}
		answered := n
		switch {
		case n == 1 && st.Decided[run[done].ID] == agentsdk.DecisionReject:
			if _, err := ctx.RejectCall(assistant.ID, run[done]); err != nil {
				return agentsdk.Outcome{}, err
			}
		case n == 1 && isSpawn(ctx, run[done]):
			if _, err := ctx.SpawnAgents(assistant.ID, run[done]); err != nil {
				return agentsdk.Outcome{}, err
			}
		case n == 1 && isSleep(ctx, run[done]):
			_, wait, err := ctx.Sleep(assistant.ID, run[done])
			if err != nil {
				return agentsdk.Outcome{}, err
			}
			if wait != nil {
				// The call is answered when the execution wakes: the
				// segment after the wait runs it again.
				st.ToolsOf, st.ToolsDone = assistant.ID, st.ToolsDone+done
				return *wait, nil
			}
		default:
			results, err := ctx.RunTools(assistant.ID, run[done:done+n])
			if err != nil {
				return agentsdk.Outcome{}, err
			}
			answered = len(results)
		}
		if answered > 0 {
			if ctx.Version(agentsdk.ChangeOneStep, 1) == agentsdk.DefaultVersion {
				st.Steps += answered
			}
			st.LastToolDigest, st.ToolRepeats = after[done+answered-1].digest, after[done+answered-1].repeats
			for _, tc := range run[done : done+answered] {
				delete(st.Decided, tc.ID)
			}
		}
		done += answered
		if answered < n {
			// This run's history has no room for more: the next segment
			// runs the rest.
			st.ToolsOf, st.ToolsDone = assistant.ID, st.ToolsDone+done
			return agentsdk.Continue(), nil
		}
	}
	digest, repeats := st.LastToolDigest, st.ToolRepeats
	if stop >= 0 {
		digest, repeats = after[stop].digest, after[stop].repeats
	}
	st.ToolsOf, st.ToolsDone, st.Decided = "", 0, nil
	if stop < 0 && cfg.MaxSteps > 0 && st.Steps-st.StepBase >= cfg.MaxSteps && ctx.Version(stepBudget, 1) != agentsdk.DefaultVersion {
		// The budget is spent: pause before the next model call, every
		// call of this answer answered, so a resume starts cleanly.
		return agentsdk.Pause(StopMaxSteps), nil
	}
	if stop >= 0 {
		st.LastToolDigest, st.ToolRepeats = digest, repeats
		for _, skipped := range calls[stop:] {
			msg := agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: skipped.ID, Name: skipped.Name},
				fmt.Sprintf("not run: the same call was made %d times in a row (loop detected)", repeats), true)
			if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
				return agentsdk.Outcome{}, err
			}
		}
		return agentsdk.Complete(StopLoopDetected), nil
	}
	return agentsdk.Continue(), nil
}

// workerCallsFirst orders an answer's calls as they are answered: the
// calls workers run, then the client's (agentsdk.Config.ClientTools),
// each in the answer's order. Answers without client calls — every
// answer of an execution without client tools — keep their order, so
// State.ToolsDone indexes them as before.
func workerCallsFirst(calls []agentsdk.ToolCallRef) []agentsdk.ToolCallRef {
	if !slices.ContainsFunc(calls, func(tc agentsdk.ToolCallRef) bool { return tc.Client }) {
		return calls
	}
	out := make([]agentsdk.ToolCallRef, 0, len(calls))
	for _, client := range []bool{false, true} {
		for _, tc := range calls {
			if tc.Client == client {
				out = append(out, tc)
			}
		}
	}
	return out
}

// seen is loop detection's state after a call.
type seen struct {
	digest  string
	repeats int
}

// loopCheck looks at the calls in order before any runs: the ones before
// the first repeat too many run (after holds the state after each), the
// rest (from stop; -1 for none) are answered with an error.
func loopCheck(st *agentsdk.State, cfg agentsdk.Config, calls []agentsdk.ToolCallRef) ([]seen, int) {
	digest, repeats := st.LastToolDigest, st.ToolRepeats
	after := make([]seen, 0, len(calls))
	for i, tc := range calls {
		if tc.Digest != "" && tc.Digest == digest {
			repeats++
		} else {
			digest, repeats = tc.Digest, 1
		}
		after = append(after, seen{digest, repeats})
		if cfg.LoopThreshold > 0 && repeats >= cfg.LoopThreshold {
			return after, i
		}
	}
	return after, -1
}

// toolApprovals is the change that honours tool policies: a call whose
// policy is ask waits for a person's decision.
const toolApprovals = "react.tool-approvals"

// needsDecision reports whether a call waits for a person: its policy is
// ask, its tool is not approved for the whole execution, and it has no
// decision yet.
func needsDecision(st *agentsdk.State, tc agentsdk.ToolCallRef) bool {
	return tc.Policy == agentsdk.PolicyAsk && !slices.Contains(st.AlwaysAllow, tc.Name) && st.Decided[tc.ID] == ""
}

// applyDecisions applies the pending decisions: each on a call among
// calls that waits for one is recorded in State.Decided (and an "always"
// approval in AlwaysAllow); any other is consumed as ignored, so it
// cannot wake the agent again.
func applyDecisions(ctx agentsdk.Context, assistant *agentsdk.EntryRef, calls []agentsdk.ToolCallRef) error {
	ds, err := ctx.Decisions()
	if err != nil || len(ds) == 0 {
		return err
	}
	st := ctx.State()
	for _, d := range ds {
		i := slices.IndexFunc(calls, func(tc agentsdk.ToolCallRef) bool { return tc.ID == d.ToolCallID })
		valid := d.Decision == agentsdk.DecisionApprove || d.Decision == agentsdk.DecisionReject
		if i < 0 || !valid || !needsDecision(st, calls[i]) {
			if _, err := ctx.ApplyDecision("", d); err != nil {
				return err
			}
			continue
		}
		if _, err := ctx.ApplyDecision(assistant.ID, d); err != nil {
			return err
		}
		if st.Decided == nil {
			st.Decided = map[string]string{}
		}
		st.Decided[d.ToolCallID] = d.Decision
		if d.Always && d.Decision == agentsdk.DecisionApprove && !slices.Contains(st.AlwaysAllow, calls[i].Name) {
			st.AlwaysAllow = append(st.AlwaysAllow, calls[i].Name)
		}
	}
	return nil
}

// nextCalls is how many of calls run next: those before the first that
// waits for a decision, or that one alone once decided (a spawn_agents
// call, too, runs alone). When the first waits, it asks for decisions on
// every call that waits and reports wait: the agent then waits for them.
func (a *Agent) nextCalls(ctx agentsdk.Context, assistant *agentsdk.EntryRef, calls []agentsdk.ToolCallRef, approvals bool) (n int, wait bool, err error) {
	st := ctx.State()
	if !approvals {
		return len(calls), false, nil
	}
	if (isSpawn(ctx, calls[0]) || isSleep(ctx, calls[0])) && !needsDecision(st, calls[0]) {
		return 1, false, nil
	}
	if needsDecision(st, calls[0]) {
		var ask []agentsdk.ToolCallRef
		for _, tc := range calls {
			if needsDecision(st, tc) {
				ask = append(ask, tc)
			}
		}
		return 0, true, ctx.RequestApproval(assistant.ID, ask)
	}
	if st.Decided[calls[0].ID] != "" {
		return 1, false, nil
	}
	n = 1
	for n < len(calls) && !needsDecision(st, calls[n]) && st.Decided[calls[n].ID] == "" && calls[n].Name != agentsdk.ToolSpawnAgents && !calls[n].Client && !isSleep(ctx, calls[n]) {
		n++
	}
	return n, false, nil
}

// subAgents is the change that answers spawn_agents calls in the workflow
// (Context.SpawnAgents) rather than as a tool.
const subAgents = "react.sub-agents"

// isSpawn reports whether tc is a spawn_agents call the agent answers
// itself.
func isSpawn(ctx agentsdk.Context, tc agentsdk.ToolCallRef) bool {
	return tc.Name == agentsdk.ToolSpawnAgents && ctx.Version(subAgents, 1) != agentsdk.DefaultVersion
}

// sleeps is the change that answers sleep calls in the workflow
// (Context.Sleep: a durable timer) rather than as a tool.
const sleeps = "react.sleep"

// isSleep reports whether tc is a sleep call the agent answers itself.
func isSleep(ctx agentsdk.Context, tc agentsdk.ToolCallRef) bool {
	return tc.Name == agentsdk.ToolSleep && ctx.Version(sleeps, 1) != agentsdk.DefaultVersion
}

// runToolsInTurn is runTools before parallelTools: the calls run one
// after another. Segments recorded then replay it.
func (a *Agent) runToolsInTurn(ctx agentsdk.Context, cfg agentsdk.Config, assistant *agentsdk.EntryRef) (agentsdk.Outcome, error) {
	st := ctx.State()
	for i, tc := range assistant.ToolCalls {
		if ctx.Cancelled() {
			return agentsdk.Outcome{}, fmt.Errorf("react: cancelled")
		}
		if tc.Digest != "" && tc.Digest == st.LastToolDigest {
			st.ToolRepeats++
		} else {
			st.LastToolDigest, st.ToolRepeats = tc.Digest, 1
		}
		if cfg.LoopThreshold > 0 && st.ToolRepeats >= cfg.LoopThreshold {
			for _, skipped := range assistant.ToolCalls[i:] {
				msg := agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: skipped.ID, Name: skipped.Name},
					fmt.Sprintf("not run: the same call was made %d times in a row (loop detected)", st.ToolRepeats), true)
				if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
					return agentsdk.Outcome{}, err
				}
			}
			return agentsdk.Complete(StopLoopDetected), nil
		}
		if _, err := ctx.RunTool(assistant.ID, tc); err != nil {
			return agentsdk.Outcome{}, err
		}
		if ctx.Version(agentsdk.ChangeOneStep, 1) == agentsdk.DefaultVersion {
			st.Steps++
		}
	}
	return agentsdk.Continue(), nil
}

// takeUserMessages turns every pending userMessage signal into a user
// entry and reports whether there were any.
func takeUserMessages(ctx agentsdk.Context) (bool, error) {
	took := false
	for _, s := range ctx.Signals() {
		if s.Name != agentsdk.SignalUserMessage {
			continue
		}
		if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{}); err != nil {
			return took, err
		}
		// A message the runtime leaves pending waits for the next step
		// (a lost workflow task's re-run goes the lost task's way).
		took = took || !slices.ContainsFunc(ctx.Signals(), func(p agentsdk.Signal) bool { return p.ID == s.ID })
	}
	return took, nil
}
