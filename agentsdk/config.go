package agentsdk

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Mode says what an agent does after its final answer.
type Mode string

// The modes.
const (
	// ModeOneShot completes the execution after the final answer.
	ModeOneShot Mode = "one-shot"
	// ModeMultiTurn waits for the next userMessage signal.
	ModeMultiTurn Mode = "multi-turn"
)

// Config is an execution's configuration, frozen when the execution is
// created. The zero value of each field means its default.
type Config struct {
	SystemPrompt string     `json:"systemPrompt,omitempty"`
	Models       []ModelRef `json:"models,omitempty"`
	Tools        []string   `json:"tools,omitempty"`
	// ClientTools are tools the execution's client runs itself: offered to
	// the model beside Tools, a call to one makes the execution wait for
	// its output (SignalToolResult). Names must not be worker tools'.
	ClientTools []ToolSpec `json:"clientTools,omitempty"`
	Mode        Mode       `json:"mode,omitempty"`
	// MaxTurns bounds the steps (model calls) that answer one user input —
	// a multi-turn execution gets a fresh budget with every message; default
	// 50, at most 1000 (ConfigBounds holds every numeric field's range).
	MaxTurns int `json:"maxTurns,omitempty"`
	// MaxTokens bounds each answer; default 4096, at most 1,000,000.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Temperature is the sampling temperature, 0 to 2; nil = the model's.
	Temperature *float64 `json:"temperature,omitempty"`
	// ThinkingBudget enables extended thinking with up to this many
	// tokens, at most 1,000,000; an explicit 0 turns it off. Unset (nil),
	// thinking is on by default with DefaultThinkingBudget on the models
	// that support it (seed 004: reasoning is data, kept unless opted
	// out), unless Temperature is set: thinking models take only their
	// default temperature, so a set one keeps the default off.
	ThinkingBudget *int `json:"thinkingBudget,omitempty"`
	// LoopThreshold stops the agent when the same tool call (name and
	// arguments) is made this many times in a row; default 3, -1 = off,
	// at most 100.
	LoopThreshold int `json:"loopThreshold,omitempty"`
	// ToolOutputLimit is the most bytes of a tool's output the model sees;
	// the rest is cut from the middle and kept whole in the content store.
	// Default 16 KiB, at most 1 MiB.
	ToolOutputLimit int `json:"toolOutputLimit,omitempty"`
	// MaxParallelTools is how many tool calls of one answer run at once;
	// default 4, at most 64.
	MaxParallelTools int `json:"maxParallelTools,omitempty"`
	// MaxSteps is the execution's step budget (a step is one model call
	// and the tool calls it asks for: ChangeOneStep): once the step that
	// reaches it has its tool calls answered, the execution ends PAUSED
	// rather than call the model again; a resume continues with a fresh
	// budget. 0: no budget (maxTurns still bounds each input).
	MaxSteps int `json:"maxSteps,omitempty"`
	// ToolPolicy sets, per tool name or glob, whether a call runs (auto),
	// waits for a person's approval (ask) or is never run (forbid), under
	// the operator's ceiling (the worker's configuration, then the tool's
	// default): it can only tighten it (see PolicyFor).
	ToolPolicy Policies `json:"toolPolicy,omitempty"`
	// PersistenceMode is where the conversation is kept: "remote" (the
	// default) in the shared Postgres, or "local" in a store on the worker
	// that first runs the execution, which alone can then run it
	// (PersistenceWorkerHeld).
	PersistenceMode string `json:"persistenceMode,omitempty"`
	// Compaction keeps the context under the model's window; nil = on,
	// with its defaults.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Budget caps the execution's tokens and cost, with a downgrade to a
	// cheaper model before the cap; nil = no cap but the organization's.
	Budget *Budget `json:"budget,omitempty"`
	// ApprovalTimeout gives approval waits a deadline and an outcome on
	// expiry; nil = wait for a person however long it takes.
	ApprovalTimeout *ApprovalTimeout `json:"approvalTimeout,omitempty"`
	// Agent is the agent's own configuration.
	Agent json.RawMessage `json:"agent,omitempty"`
	// Counterfactual marks a counterfactual branch of another execution
	// (the gateway's POST …/counterfactuals sets it): its tool calls that
	// match a call recorded on the original's conversation are answered
	// from that record, and its other calls of tools not ReadOnly wait for
	// a person's approval whatever the policy says. nil for every other
	// execution.
	Counterfactual *Counterfactual `json:"counterfactual,omitempty"`
}

// Counterfactual names what a counterfactual branch questions.
type Counterfactual struct {
	// Of is the original execution's ID.
	Of string `json:"of"`
	// Leaf is the original's leaf entry when the branch was made: the
	// calls recorded on the path to it answer the branch's.
	Leaf string `json:"leaf"`
	// Entry is the original's entry the alternative replaces.
	Entry string `json:"entry,omitempty"`
}

// The persistence modes.
const (
	// PersistenceRemote keeps the conversation in the shared Postgres.
	PersistenceRemote = "remote"
	// PersistenceWorkerHeld keeps entries, content, checkpoints and tool-call
	// records in the worker store of the worker that first runs the
	// execution; the execution row, status, signals and stream stay in
	// Postgres. Only that worker can run it.
	PersistenceWorkerHeld = "local"
)

// WorkerHeld reports whether the execution keeps its conversation on a worker.
func (c Config) WorkerHeld() bool { return c.PersistenceMode == PersistenceWorkerHeld }

// OfferedTools are the tools the configuration offers the model: its
// tools but those its own policy forbids (a worker's policy, or a tool's
// own, may forbid more: a model call records what it offered when that
// differs).
func (c Config) OfferedTools() []string {
	var out []string
	for _, t := range c.Tools {
		if p, ok := c.ToolPolicy.Lookup(t); !ok || p != PolicyForbid {
			out = append(out, t)
		}
	}
	return out
}

// Defaults for Config's zero fields.
const (
	DefaultMaxTurns         = 50
	DefaultMaxTokens        = 4096
	DefaultLoopThreshold    = 3
	DefaultToolOutputLimit  = 16 << 10
	DefaultMaxParallelTools = 4
	// MaxTotalSteps is the most steps a run may take across all its
	// resumes (seed 001's MaxTotalStepsPerRun): a resume that would pass
	// it is refused.
	MaxTotalSteps = 500
)

// DefaultThinkingBudget is the thinking budget of a configuration that
// sets none, on models that support thinking: enough for a considered
// step without dwarfing DefaultMaxTokens (providers raise max_tokens above
// the budget when they must).
const DefaultThinkingBudget = 4096

// Thinking is the thinking budget a model request carries and whether it
// is the default (ModelRequest.ThinkingByDefault): the configured budget
// when set (0 = off), else DefaultThinkingBudget by default, unless a
// temperature is set.
func (c Config) Thinking() (budget int, byDefault bool) {
	switch {
	case c.ThinkingBudget != nil:
		return *c.ThinkingBudget, false
	case c.Temperature != nil:
		return 0, false
	}
	return DefaultThinkingBudget, true
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeOneShot
	}
	if c.MaxTurns == 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.LoopThreshold == 0 {
		c.LoopThreshold = DefaultLoopThreshold
	}
	if c.ToolOutputLimit == 0 {
		c.ToolOutputLimit = DefaultToolOutputLimit
	}
	if c.MaxParallelTools == 0 {
		c.MaxParallelTools = DefaultMaxParallelTools
	}
	return c
}

// Validate reports the first thing wrong with c, checking models and tools
// against what the runtime knows. A nil providers or tools skips that check.
func (c Config) Validate(providers Providers, tools Tools) error {
	var problems []string
	switch c.Mode {
	case "", ModeOneShot, ModeMultiTurn:
	default:
		problems = append(problems, fmt.Sprintf("mode %q is not one-shot or multi-turn", c.Mode))
	}
	problems = append(problems, c.boundProblems()...)
	problems = append(problems, c.ToolPolicy.Problems("toolPolicy")...)
	problems = append(problems, c.Compaction.Problems("compaction")...)
	problems = append(problems, c.Budget.Problems("budget")...)
	problems = append(problems, c.ApprovalTimeout.Problems("approvalTimeout")...)
	switch c.PersistenceMode {
	case "", PersistenceRemote, PersistenceWorkerHeld:
	default:
		problems = append(problems, fmt.Sprintf("persistenceMode %q is not remote or local", c.PersistenceMode))
	}
	for i, m := range c.Models {
		if m.Provider == "" || m.ModelID == "" {
			problems = append(problems, fmt.Sprintf("models[%d] needs provider and modelId", i))
			continue
		}
		if providers != nil {
			if _, err := providers.Get(m.Provider); err != nil {
				problems = append(problems, fmt.Sprintf("models[%d]: unknown provider %q%s", i, m.Provider, ProviderHint(m.Provider)))
			}
		}
	}
	problems = append(problems, c.clientToolProblems(tools)...)
	if tools != nil {
		for _, n := range c.Tools {
			if _, ok := tools[n]; !ok {
				problems = append(problems, fmt.Sprintf("unknown tool %q (known: %s)", n, strings.Join(tools.Names(), ", ")))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidInput, strings.Join(problems, "; "))
	}
	return nil
}

// IntBound is the range of one of Config's integer fields. Every range
// holds 0, which means the field's default.
type IntBound struct {
	// Field is the field's JSON name.
	Field string
	// Min and Max are the smallest and largest value accepted.
	Min, Max int
	// Zero says what 0 (and any other special value) means.
	Zero string
	get  func(Config) int
}

// Problem describes a value outside the bound (got as the caller wrote
// it), naming the field as the caller knows it (field).
func (b IntBound) Problem(field, got string) string {
	return fmt.Sprintf("%s must be a whole number from %d to %d (%s); got %s", field, b.Min, b.Max, b.Zero, got)
}

// Temperature's range.
const (
	MinTemperature = 0.0
	MaxTemperature = 2.0
)

// ConfigBounds are the ranges of Config's integer fields, so a request
// cannot ask for a trillion turns or a budget no model takes; the gateway
// refuses anything outside them with the field and the range.
var ConfigBounds = []IntBound{
	{Field: "maxTurns", Min: 0, Max: 1000, Zero: "0 = the default, 50", get: func(c Config) int { return c.MaxTurns }},
	{Field: "maxTokens", Min: 0, Max: 1_000_000, Zero: "0 = the default, 4096", get: func(c Config) int { return c.MaxTokens }},
	{Field: "thinkingBudget", Min: 0, Max: 1_000_000, Zero: "0 = off; unset = 4096 on models that support thinking", get: func(c Config) int {
		if c.ThinkingBudget == nil {
			return 0
		}
		return *c.ThinkingBudget
	}},
	{Field: "loopThreshold", Min: -1, Max: 100, Zero: "0 = the default, 3; -1 = off", get: func(c Config) int { return c.LoopThreshold }},
	{Field: "toolOutputLimit", Min: 0, Max: 1 << 20, Zero: "0 = the default, 16384 bytes", get: func(c Config) int { return c.ToolOutputLimit }},
	{Field: "maxParallelTools", Min: 0, Max: 64, Zero: "0 = the default, 4", get: func(c Config) int { return c.MaxParallelTools }},
	{Field: "maxSteps", Min: 0, Max: MaxTotalSteps, Zero: "0 = no budget", get: func(c Config) int { return c.MaxSteps }},
}

// TemperatureProblem describes a temperature outside its range.
func TemperatureProblem(field, got string) string {
	return fmt.Sprintf("%s must be a number from %g to %g; got %s", field, MinTemperature, MaxTemperature, got)
}

// boundProblems lists every numeric field outside its range.
func (c Config) boundProblems() []string {
	var problems []string
	for _, b := range ConfigBounds {
		if v := b.get(c); v < b.Min || v > b.Max {
			problems = append(problems, b.Problem(b.Field, strconv.Itoa(v)))
		}
	}
	if t := c.Temperature; t != nil && (math.IsNaN(*t) || *t < MinTemperature || *t > MaxTemperature) {
		problems = append(problems, TemperatureProblem("temperature", strconv.FormatFloat(*t, 'g', -1, 64)))
	}
	return problems
}

// ProviderHint is what to add to "unknown provider" for a provider a worker
// serves only when configured for it: a registered kind (ProviderKind)
// needs its API key in the worker's environment ("" for other names).
func ProviderHint(provider string) string {
	if k, ok := ProviderKindOf(provider); ok {
		return fmt.Sprintf("; to serve it, start a worker with %s set (or an %s endpoint in its configuration)", k.KeyEnv, provider)
	}
	return ""
}
