package react

import (
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

// Kind is the react agent's kind and Temporal workflow type.
const Kind = "react-agent"

// Stop reasons the react agent records on the execution.
const (
	StopFinalAnswer  = "end_turn"
	StopMaxTurns     = "max_turns"
	StopLoopDetected = "loop_detected"
)

// Options configure the agent; the zero value is the default agent.
type Options struct {
	// Kind overrides the agent's kind; empty = "react-agent".
	Kind string
	// (MaxTurns bounds the model calls that answer one user input: a
	// multi-turn agent gets a fresh budget with every message.)
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
	if took, err := takeUserMessages(ctx); err != nil {
		return agentsdk.Outcome{}, err
	} else if took {
		ctx.State().InputTurn = ctx.State().Turn
	}
	leaf := ctx.Leaf()
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
	st := ctx.State()
	calls := assistant.ToolCalls[st.ToolsDone:]
	// Loop detection looks at the calls in order before any runs: the
	// ones before the first repeat too many run, the rest are answered
	// with an error.
	digest, repeats := st.LastToolDigest, st.ToolRepeats
	type seen struct {
		digest  string
		repeats int
	}
	after := make([]seen, 0, len(calls))
	stop := -1
	for i, tc := range calls {
		if tc.Digest != "" && tc.Digest == digest {
			repeats++
		} else {
			digest, repeats = tc.Digest, 1
		}
		if cfg.LoopThreshold > 0 && repeats >= cfg.LoopThreshold {
			stop = i
			break
		}
		after = append(after, seen{digest, repeats})
	}
	run := calls
	if stop >= 0 {
		run = calls[:stop]
	}
	if len(run) > 0 {
		results, err := ctx.RunTools(assistant.ID, run)
		if err != nil {
			return agentsdk.Outcome{}, err
		}
		if n := len(results); n > 0 {
			st.Steps += n
			st.LastToolDigest, st.ToolRepeats = after[n-1].digest, after[n-1].repeats
		}
		if len(results) < len(run) {
			// This run's history has no room for more: the next segment
			// runs the rest.
			st.ToolsOf, st.ToolsDone = assistant.ID, st.ToolsDone+len(results)
			return agentsdk.Continue(), nil
		}
	}
	st.ToolsOf, st.ToolsDone = "", 0
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
		st.Steps++
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
		took = true
	}
	return took, nil
}
