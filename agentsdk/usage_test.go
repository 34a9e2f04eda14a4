package agentsdk_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

func TestUsageAddAndTotal(t *testing.T) {
	u := agentsdk.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Cost: 0.5, Calls: 1}
	v := agentsdk.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Cost: 0.25, Calls: 2}
	require.Equal(t, agentsdk.Usage{Input: 11, Output: 22, CacheRead: 33, CacheWrite: 44, Cost: 0.75, Calls: 3}, u.Add(v))
	require.Equal(t, int64(10), u.Total())
	require.Zero(t, agentsdk.Usage{Cost: 3, Calls: 2}.Total(), "cost and calls are not tokens")
}

func TestUsageTrackerSumsByModel(t *testing.T) {
	sonnet := agentsdk.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}
	gpt := agentsdk.ModelRef{Provider: "openai", ModelID: "gpt-5", Endpoint: "elsewhere"}
	tr := agentsdk.UsageTracker{}

	tr.Add(sonnet, agentsdk.Usage{Input: 100, Output: 10, Cost: 0.01})
	tr.Add(sonnet, agentsdk.Usage{Input: 200, Output: 20, Cost: 0.02})
	tr.Add(gpt, agentsdk.Usage{Input: 5, Output: 5, Calls: 3})

	require.Equal(t, []string{"anthropic/claude-sonnet-4-5", "openai/gpt-5"}, keys(tr))
	s := tr["anthropic/claude-sonnet-4-5"]
	require.Equal(t, int64(300), s.Input)
	require.Equal(t, int64(30), s.Output)
	require.Equal(t, 2, s.Calls, "a call without a count counts once")
	require.InDelta(t, 0.03, s.Cost, 1e-12)
	require.Equal(t, 3, tr["openai/gpt-5"].Calls, "a count given is kept")

	total := tr.Total()
	require.Equal(t, int64(305), total.Input)
	require.Equal(t, int64(35), total.Output)
	require.Equal(t, 5, total.Calls)
	require.InDelta(t, 0.03, total.Cost, 1e-12)
	require.Equal(t, agentsdk.Usage{}, agentsdk.UsageTracker{}.Total())
}

func TestStateAddUsageStartsTheTracker(t *testing.T) {
	var st agentsdk.State
	st.AddUsage(agentsdk.ModelRef{Provider: "p", ModelID: "m"}, agentsdk.Usage{Input: 1})
	require.Equal(t, agentsdk.UsageTracker{"p/m": {Input: 1, Calls: 1}}, st.Usage)
}

func TestPriceCostIsPerMillionTokens(t *testing.T) {
	p := agentsdk.Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	require.InDelta(t, 3.0, p.Cost(agentsdk.Usage{Input: 1_000_000}), 1e-12)
	require.InDelta(t, 15.0, p.Cost(agentsdk.Usage{Output: 1_000_000}), 1e-12)
	u := agentsdk.Usage{Input: 2000, Output: 500, CacheRead: 10_000, CacheWrite: 4000}
	require.InDelta(t, (2000*3+500*15+10_000*0.30+4000*3.75)/1e6, p.Cost(u), 1e-12)
	require.Zero(t, agentsdk.Price{}.Cost(u))
}

func keys(tr agentsdk.UsageTracker) []string {
	var out []string
	for k := range tr {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
