package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// Scenario is one execution both runtimes must play the same way.
type Scenario struct {
	Name string
	// Agent is the agent (default: the react agent).
	Agent func() agentsdk.Agent
	// Turns script the primary model ("scripted"); Backup, when set, a
	// fallback model ("backup") listed after it.
	Turns, Backup []scripted.Turn
	Config        agentsdk.Config
	Prompt        string
	// FollowUps are signals sent one by one, each once the execution waits.
	FollowUps []Signal
	// ModelAttempts per model (default the runtimes' default).
	ModelAttempts int32
	// StoreErrorOnce makes the first append of an assistant entry fail
	// with an unreachable store.
	StoreErrorOnce bool
	// CancelInTool cancels the execution while the "block" tool runs.
	CancelInTool bool
	// Steer is a user message sent while the "steer" tool runs.
	Steer string
	// BudgetCalls, when set, is how many model calls the organization's
	// daily budget allows: the Temporal runtime sets a tokensPerDay quota
	// the first BudgetCalls turns' usage spends, the in-memory one refuses
	// calls past that many.
	BudgetCalls int
}

// BudgetTokens is the tokensPerDay quota the first BudgetCalls turns
// spend (input + output).
func (s Scenario) BudgetTokens() int64 {
	var n int64
	for _, t := range s.Turns[:s.BudgetCalls] {
		n += t.Usage.Input + t.Usage.Output
	}
	return n
}

// Signal is a signal to send.
type Signal struct {
	Name  string
	Value any
	// Ignored: the agent does not wait for it (it stays waiting).
	Ignored bool
}

// Hooks are what a runtime does when a tool reaches a point a scenario
// acts on. They run inside the tool.
type Hooks struct {
	// Cancel cancels the execution; BlockStarted is called with it.
	BlockStarted func()
	// Steer sends a user message and returns once it is acknowledged.
	Steer func(text string)
}

// Tools are the scenario tools, their hooks bound to a runtime.
func Tools(h Hooks, steer func() string) []*agentsdk.Tool {
	tools := []*agentsdk.Tool{
		agentsdk.NewTool("echo", "Echoes its text.",
			func(_ context.Context, _ agentsdk.ToolInvocation, a textArgs) (string, error) {
				return "echo: " + a.Text, nil
			}),
		agentsdk.NewTool("big", "Returns a long text.",
			func(_ context.Context, _ agentsdk.ToolInvocation, a textArgs) (string, error) {
				return strings.Repeat(a.Text+" ", 800), nil
			}),
		agentsdk.NewTool("block", "Runs until cancelled.",
			func(ctx context.Context, _ agentsdk.ToolInvocation, _ textArgs) (string, error) {
				h.BlockStarted()
				<-ctx.Done()
				return "", ctx.Err()
			}),
		agentsdk.NewTool("steer", "Lets the user steer while it runs.",
			func(_ context.Context, _ agentsdk.ToolInvocation, a textArgs) (string, error) {
				h.Steer(steer())
				return "steered: " + a.Text, nil
			}),
		agentsdk.NewTool("flaky", "Always fails with a Retryable error.",
			func(_ context.Context, _ agentsdk.ToolInvocation, _ textArgs) (string, error) {
				return "", agentsdk.Retryable(errors.New("upstream busy"))
			}),
	}
	// block and steer stand for long work a user cancels or steers while
	// it runs: activities from their first attempt. A local call's
	// workflow task sees a message only when it ends or heartbeats, so a
	// message sent during one joins the conversation after the answer
	// that follows the call, not before it (README "Model calls").
	tools[2].LongRunning, tools[3].LongRunning = true, true
	return tools
}

type textArgs struct {
	Text string `json:"text"`
}

// ToolNames are the names of Tools.
var ToolNames = []string{"echo", "big", "block", "steer", "flaky"}

func call(id, tool, text string) agentsdk.ToolCall {
	return agentsdk.ToolCall{ID: id, Name: tool, Arguments: []byte(`{"text":"` + text + `"}`)}
}

// Scenarios are the conformance scenarios.
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name:   "one-shot with tools",
			Prompt: "run three tools",
			Turns: []scripted.Turn{
				{Text: "Let me check.", ToolCalls: []agentsdk.ToolCall{call("call_first", "echo", "one")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_second", "echo", "two"), call("call_third", "echo", "three")}},
				{Text: "All three done."},
			},
		},
		{
			Name:   "parallel tool calls in chunks",
			Prompt: "five at once, two at a time",
			Config: agentsdk.Config{MaxParallelTools: 2},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_p1", "echo", "1"), call("call_p2", "echo", "2"), call("call_p3", "big", "3"),
					call("call_p4", "echo", "4"), call("call_p5", "echo", "5")}},
				{Text: "Five results, in order."},
			},
		},
		{
			Name:      "multi-turn",
			Prompt:    "hello",
			Config:    agentsdk.Config{Mode: agentsdk.ModeMultiTurn},
			Turns:     []scripted.Turn{{Text: "answer A"}, {Text: "answer B"}, {Text: "answer C"}},
			FollowUps: []Signal{userMessage("second"), userMessage("third")},
		},
		{
			Name:   "steering mid-turn",
			Prompt: "steer me",
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_steer", "steer", "now")}},
				{Text: "Answered, steering included."},
			},
			Steer: "also mention the weather",
		},
		{
			Name:   "the organization's daily budget pauses the execution",
			Prompt: "spend it",
			Turns: []scripted.Turn{
				{Text: "One call first.", ToolCalls: []agentsdk.ToolCall{call("call_spend", "echo", "spent")},
					Usage: agentsdk.Usage{Input: 30, Output: 12}},
				{Text: "Never asked: the budget is spent."},
			},
			BudgetCalls: 1,
		},
		{
			Name:          "fallback after retryable failures",
			Prompt:        "fall back",
			Turns:         []scripted.Turn{{FailTimes: 100}},
			Backup:        []scripted.Turn{{Text: "The backup answers."}},
			ModelAttempts: 2,
		},
		{
			Name:           "store error during a model call",
			Prompt:         "survive the store",
			Turns:          []scripted.Turn{{Text: "Answered after the store came back."}},
			StoreErrorOnce: true,
		},
		{
			Name:         "cancel while a tool runs",
			Prompt:       "block",
			Turns:        []scripted.Turn{{Text: "Blocking.", ToolCalls: []agentsdk.ToolCall{call("call_block", "block", "x")}}},
			CancelInTool: true,
		},
		{
			Name:   "truncation",
			Prompt: "big output",
			Config: agentsdk.Config{ToolOutputLimit: 400},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_big", "big", "lorem")}},
				{Text: "That was long."},
			},
		},
		{
			Name:   "loop detection",
			Prompt: "loop",
			Config: agentsdk.Config{LoopThreshold: 2},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_l1", "echo", "same")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_l2", "echo", "same")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_l3", "echo", "same")}},
				{Text: "I stop."},
			},
		},
		{
			Name:   "max turns",
			Prompt: "forever",
			Config: agentsdk.Config{MaxTurns: 2},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_m1", "echo", "a")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_m2", "echo", "b")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_m3", "echo", "c")}},
			},
		},
		{
			Name:      "custom agent waits on its own signals and streams data",
			Agent:     func() agentsdk.Agent { return approvalAgent{} },
			Prompt:    "paint the fence",
			FollowUps: []Signal{{Name: "ping", Ignored: true}, {Name: signalApprove, Value: approval{By: "ana"}}},
		},
		{
			// echo and block ask, big is forbidden: the first answer waits
			// for call_a and call_c; approving call_a "always" approves
			// call_c too, and big answers with an error unrun. The block
			// call is rejected, so it never runs (it would block).
			Name:   "tool approvals",
			Prompt: "approve, forbid, reject",
			Config: agentsdk.Config{ToolPolicy: agentsdk.Policies{"echo": agentsdk.PolicyAsk, "bl*": agentsdk.PolicyAsk, "big": agentsdk.PolicyForbid}},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_a", "echo", "one"), call("call_b", "big", "x"), call("call_c", "echo", "two")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_d", "block", "x")}},
				{Text: "Done without blocking."},
			},
			FollowUps: []Signal{
				decision("call_a", agentsdk.DecisionApprove, "", true),
				decision("call_d", agentsdk.DecisionReject, "not now", false),
			},
		},
		{
			// lookup is the client's: the worker runs echo, and the
			// execution waits for both lookup outputs, which come in
			// the other order; the turn then goes on with the model.
			Name:   "client tool calls wait for their outputs",
			Prompt: "look two things up",
			Config: agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "lookup", Description: "Looks a word up on the client.",
				Parameters: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}},
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_c1", "lookup", "one"), call("call_w1", "echo", "mine"), call("call_c2", "lookup", "two")}},
				{Text: "Both looked up."},
			},
			FollowUps: []Signal{toolResult("call_c2", "second"), toolResult("call_c1", "first")},
		},
		{
			// A tool that used its attempts is an error result the model
			// reads, alone and in a parallel batch; the execution goes on.
			Name:   "a tool that keeps failing is given up on",
			Prompt: "try the flaky tool",
			Turns: []scripted.Turn{
				{ToolCalls: []agentsdk.ToolCall{call("call_f1", "flaky", "alone")}},
				{ToolCalls: []agentsdk.ToolCall{call("call_f2", "flaky", "beside"), call("call_f3", "echo", "fine")}},
				{Text: "The flaky tool is down; echo works."},
			},
		},
	}
}

func decision(id, d, reason string, always bool) Signal {
	return Signal{Name: agentsdk.SignalToolApproval,
		Value: agentsdk.Decision{ToolCallID: id, Decision: d, Reason: reason, Always: always, DecidedBy: "key-1"}}
}

func toolResult(id, output string) Signal {
	return Signal{Name: agentsdk.SignalToolResult, Value: agentsdk.ToolResultValue{ToolCallID: id, Output: output}}
}

func userMessage(text string) Signal {
	return Signal{Name: agentsdk.SignalUserMessage, Value: agentsdk.UserMessage{Text: text}}
}

// Agents are every scenario's agents, for a worker to register.
func Agents() []agentsdk.Agent {
	return []agentsdk.Agent{react.New(react.Options{}), approvalAgent{}}
}

// AgentOf is the scenario's agent.
func (s Scenario) AgentOf() agentsdk.Agent {
	if s.Agent == nil {
		return react.New(react.Options{})
	}
	return s.Agent()
}

// Models are the scenario's model providers, fresh for one run.
func (s Scenario) Models() (primary, backup *scripted.Provider) {
	primary = scripted.New(scripted.Turns(s.Turns...))
	if len(s.Turns) == 0 {
		primary = scripted.New(scripted.Turns(scripted.Turn{Text: "unused"}))
	}
	b := s.Backup
	if len(b) == 0 {
		b = []scripted.Turn{{Text: "unused backup"}}
	}
	return primary, scripted.New(scripted.Turns(b...)).Named("backup")
}

// ConfigOf is the execution's configuration.
func (s Scenario) ConfigOf() agentsdk.Config {
	cfg := s.Config
	cfg.Models = []agentsdk.ModelRef{scripted.Model("")}
	if len(s.Backup) > 0 {
		cfg.Models = append(cfg.Models, agentsdk.ModelRef{Provider: "backup", ModelID: "backup-1"})
	}
	cfg.Tools = ToolNames
	return cfg
}
