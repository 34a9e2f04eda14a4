package customagent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/customagent"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

func startInMemory(t *testing.T, cfg agentsdk.Config) *agenttest.Execution {
	t.Helper()
	x, err := agenttest.Start(agenttest.Options{
		Agent:      customagent.New(),
		Providers:  []agentsdk.Provider{scripted.New(customagent.DraftScript())},
		Config:     cfg,
		UserPrompt: customagent.Prompt,
	})
	require.NoError(t, err)
	return x
}

func texts(t *testing.T, x *agenttest.Execution) []string {
	t.Helper()
	msgs, err := x.Messages()
	require.NoError(t, err)
	return sampletest.Texts(msgs)
}

// dataEvents are the agent's own stream events: its StreamData values.
func dataEvents(t *testing.T, x *agenttest.Execution) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range x.Store.Events() {
		if e.Name != event.NameData {
			continue
		}
		var d event.Data
		require.NoError(t, json.Unmarshal(e.Data, &d))
		if d.Data.Type != event.TypeCustom {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal(d.Data.Value, &v))
		if v["draft"] != nil || v["approved"] != nil {
			out = append(out, v)
		}
	}
	return out
}

func TestApprovedAfterARevision(t *testing.T) {
	x := startInMemory(t, customagent.Config(customagent.Settings{}))
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, customagent.WaitApproval, x.Reason)

	require.NoError(t, x.Signal(customagent.SignalReject, customagent.Decision{By: "ana", Note: "Less hype."}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)

	require.NoError(t, x.Signal(customagent.SignalApprove, customagent.Decision{By: "bo"}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	require.Equal(t, customagent.StopApproved, x.Reason)
	require.Equal(t, []string{
		"user: " + customagent.Prompt,
		"assistant: " + customagent.Drafts[0],
		"user: Rejected by ana. Less hype. Please revise the draft.",
		"assistant: " + customagent.Drafts[1],
		"user: Approved by bo.",
	}, texts(t, x))

	events := dataEvents(t, x)
	require.Len(t, events, 3)
	require.Equal(t, 1.0, events[0]["draft"])
	require.Equal(t, 2.0, events[1]["draft"])
	require.Equal(t, events[1]["entryId"], events[2]["approved"], "the approved draft is the second")
	require.Equal(t, 2, x.State().Turn)
}

func TestOtherSignalsKeepItWaiting(t *testing.T) {
	x := startInMemory(t, customagent.Config(customagent.Settings{}))
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.NoError(t, x.Signal("ping", nil))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, 2, x.Segments)
	require.Len(t, texts(t, x), 2, "no new draft for a signal that is no decision")
}

func TestGivesUpAfterMaxDrafts(t *testing.T) {
	x := startInMemory(t, customagent.Config(customagent.Settings{MaxDrafts: 2}))
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	for range 2 {
		require.Equal(t, agenttest.StatusWaiting, x.Status)
		require.NoError(t, x.Signal(customagent.SignalReject, customagent.Decision{By: "ana"}))
		require.NoError(t, x.Run(ctx))
	}
	require.Equal(t, agenttest.StatusFailed, x.Status)
	require.Equal(t, "all 2 drafts were rejected", x.Reason)
	require.Equal(t, "user: Rejected by ana. Please revise the draft.", texts(t, x)[4], "the last rejection is recorded too")
}

func TestBadSettingsFailAtOnce(t *testing.T) {
	cfg := customagent.Config(customagent.Settings{})
	cfg.Agent = json.RawMessage(`{"maxDrafts":"many"}`)
	x := startInMemory(t, cfg)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusFailed, x.Status)
	require.Contains(t, x.Reason, "approval: config.agent")
}
