package agentsdk_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// namedProvider is a Provider that is never called.
type namedProvider string

func (p namedProvider) Name() string { return string(p) }
func (p namedProvider) Stream(context.Context, agentsdk.ModelRequest, agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	panic("not called")
}

func temperature(v float64) *float64 { return &v }

func TestConfigValidateAcceptsAGoodConfig(t *testing.T) {
	providers := agentsdk.Providers{"anthropic": namedProvider("anthropic")}
	tools, err := agentsdk.NewTools(tool("read", readSchema))
	require.NoError(t, err)
	for _, temp := range []*float64{nil, temperature(0), temperature(2)} {
		cfg := agentsdk.Config{
			Mode:        agentsdk.ModeMultiTurn,
			Models:      []agentsdk.ModelRef{{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}},
			Tools:       []string{"read"},
			Temperature: temp,
		}
		require.NoError(t, cfg.Validate(providers, tools))
	}
	require.NoError(t, agentsdk.Config{}.Validate(nil, nil), "the zero config is the default one")
}

func TestConfigValidateListsEveryProblem(t *testing.T) {
	providers := agentsdk.Providers{"anthropic": namedProvider("anthropic")}
	tools, err := agentsdk.NewTools(tool("read", readSchema), tool("ls", `{}`))
	require.NoError(t, err)
	cfg := agentsdk.Config{
		Mode:        "forever",
		MaxTurns:    -1,
		Temperature: temperature(2.5),
		Models: []agentsdk.ModelRef{
			{Provider: "anthropic"},
			{Provider: "mistral", ModelID: "large"},
			{Provider: "anthropic", ModelID: "claude-haiku-4-5"},
		},
		Tools: []string{"read", "write"},
	}

	err = cfg.Validate(providers, tools)

	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	want := []string{
		`mode "forever" is not one-shot or multi-turn`,
		"maxTurns must be a whole number from 0 to 1000 (0 = the default, 50); got -1",
		"temperature must be a number from 0 to 2; got 2.5",
		"models[0] needs provider and modelId",
		`models[1]: unknown provider "mistral"`,
		`unknown tool "write" (known: ls, read)`,
	}
	require.Equal(t, "invalid input: "+strings.Join(want, "; "), err.Error())
}

func TestConfigValidateChecksEachBound(t *testing.T) {
	for name, cfg := range map[string]agentsdk.Config{
		"negative maxTokens":        {MaxTokens: -1},
		"negative toolOutputLimit":  {ToolOutputLimit: -1},
		"negative temperature":      {Temperature: temperature(-0.1)},
		"model without provider":    {Models: []agentsdk.ModelRef{{ModelID: "m"}}},
		"maxTurns past int32":       {MaxTurns: 2147483648},
		"a trillion turns":          {MaxTurns: 1e12},
		"maxTokens too large":       {MaxTokens: 1_000_001},
		"thinkingBudget too large":  {ThinkingBudget: intp(1_000_001)},
		"negative thinkingBudget":   {ThinkingBudget: intp(-1)},
		"loopThreshold below -1":    {LoopThreshold: -2},
		"loopThreshold too large":   {LoopThreshold: 101},
		"toolOutputLimit too large": {ToolOutputLimit: 1<<20 + 1},
	} {
		require.ErrorIs(t, cfg.Validate(nil, nil), agentsdk.ErrInvalidInput, name)
	}
	for _, b := range agentsdk.ConfigBounds {
		require.LessOrEqual(t, b.Min, 0, "%s: 0 (the default) is always in range", b.Field)
		require.Greater(t, b.Max, 0, b.Field)
	}
	edges := agentsdk.Config{MaxTurns: 1000, MaxTokens: 1_000_000, ThinkingBudget: intp(1_000_000), LoopThreshold: -1,
		ToolOutputLimit: 1 << 20, Temperature: temperature(2)}
	require.NoError(t, edges.Validate(nil, nil), "the bounds themselves are accepted")
}

func TestConfigValidateSkipsWhatItIsNotGiven(t *testing.T) {
	cfg := agentsdk.Config{
		Models: []agentsdk.ModelRef{{Provider: "anyone", ModelID: "m"}},
		Tools:  []string{"anything"},
	}
	require.NoError(t, cfg.Validate(nil, nil))
	require.ErrorContains(t, cfg.Validate(agentsdk.Providers{}, nil), `unknown provider "anyone"`)
	require.ErrorContains(t, cfg.Validate(nil, agentsdk.Tools{}), `unknown tool "anything"`)
}

func TestConfigWithDefaultsFillsOnlyZeroFields(t *testing.T) {
	require.Equal(t, agentsdk.Config{
		Mode:             agentsdk.ModeOneShot,
		MaxTurns:         agentsdk.DefaultMaxTurns,
		MaxTokens:        agentsdk.DefaultMaxTokens,
		LoopThreshold:    agentsdk.DefaultLoopThreshold,
		ToolOutputLimit:  agentsdk.DefaultToolOutputLimit,
		MaxParallelTools: agentsdk.DefaultMaxParallelTools,
	}, agentsdk.Config{}.WithDefaults())

	set := agentsdk.Config{
		SystemPrompt: "Be brief.", Mode: agentsdk.ModeMultiTurn, MaxTurns: 5, MaxTokens: 100,
		LoopThreshold: -1, ToolOutputLimit: 1024, ThinkingBudget: intp(2048), Temperature: temperature(0), MaxParallelTools: 2,
	}
	require.Equal(t, set, set.WithDefaults())
}

// Thinking is on by default, off with an explicit 0 or a set temperature.
func TestConfigThinkingDefaultsOn(t *testing.T) {
	budget, byDefault := agentsdk.Config{}.Thinking()
	require.Equal(t, agentsdk.DefaultThinkingBudget, budget)
	require.True(t, byDefault)

	var off agentsdk.Config
	require.NoError(t, json.Unmarshal([]byte(`{"thinkingBudget": 0}`), &off))
	budget, byDefault = off.Thinking()
	require.Zero(t, budget, "an explicit 0 is off")
	require.False(t, byDefault)
	b, err := json.Marshal(off)
	require.NoError(t, err)
	require.JSONEq(t, `{"thinkingBudget": 0}`, string(b), "an explicit 0 survives a round trip")

	temp := 0.2
	budget, _ = agentsdk.Config{Temperature: &temp}.Thinking()
	require.Zero(t, budget, "a set temperature keeps the default off")
	budget, byDefault = agentsdk.Config{ThinkingBudget: intp(2048), Temperature: &temp}.Thinking()
	require.Equal(t, 2048, budget)
	require.False(t, byDefault)
}

func intp(n int) *int { return &n }
