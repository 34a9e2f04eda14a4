package agentsdk

import (
	"encoding/json"
	"fmt"
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
	Mode         Mode       `json:"mode,omitempty"`
	// MaxTurns bounds model calls per execution; default 50.
	MaxTurns int `json:"maxTurns,omitempty"`
	// MaxTokens bounds each answer; default 4096.
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	// ThinkingBudget enables extended thinking; 0 = off.
	ThinkingBudget int `json:"thinkingBudget,omitempty"`
	// LoopThreshold stops the agent when the same tool call (name and
	// arguments) is made this many times in a row; default 3, -1 = off.
	LoopThreshold int `json:"loopThreshold,omitempty"`
	// ToolOutputLimit is the most bytes of a tool's output the model sees;
	// the rest is cut from the middle and kept whole in the content store.
	// Default 16 KiB.
	ToolOutputLimit int `json:"toolOutputLimit,omitempty"`
	// Agent is the agent's own configuration.
	Agent json.RawMessage `json:"agent,omitempty"`
}

// Defaults for Config's zero fields.
const (
	DefaultMaxTurns        = 50
	DefaultMaxTokens       = 4096
	DefaultLoopThreshold   = 3
	DefaultToolOutputLimit = 16 << 10
)

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
	if c.MaxTurns < 0 || c.MaxTokens < 0 || c.ToolOutputLimit < 0 {
		problems = append(problems, "maxTurns, maxTokens and toolOutputLimit must not be negative")
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2) {
		problems = append(problems, "temperature must be between 0 and 2")
	}
	for i, m := range c.Models {
		if m.Provider == "" || m.ModelID == "" {
			problems = append(problems, fmt.Sprintf("models[%d] needs provider and modelId", i))
			continue
		}
		if providers != nil {
			if _, err := providers.Get(m.Provider); err != nil {
				problems = append(problems, fmt.Sprintf("models[%d]: unknown provider %q", i, m.Provider))
			}
		}
	}
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
