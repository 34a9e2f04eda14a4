package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestSleepingExecutionShowsItsWake: an execution asleep on a timer shows
// it over REST (waitingFor timer, wakeAt) and in agent.waiting, then wakes
// by itself and completes.
func TestSleepingExecutionShowsItsWake(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "nap", Name: agentsdk.ToolSleep, Arguments: []byte(`{"seconds":2}`)}}},
		scripted.Turn{Text: "awake"},
	))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{agentsdk.SleepTool(0)}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "nap", "models": scriptedModel, "tools": []string{agentsdk.ToolSleep},
	})
	id := ex["id"].(string)
	s := e.openStream(t, e.keyA, base+"/"+id+"/stream/consolidated", "")
	evs := s.until(t, "agent.waiting", time.Minute)
	var waiting struct {
		Reason string    `json:"reason"`
		WakeAt time.Time `json:"wakeAt"`
	}
	require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-1].Data), &waiting))
	require.Equal(t, agentsdk.WaitTimer, waiting.Reason)
	require.WithinDuration(t, time.Now().Add(2*time.Second), waiting.WakeAt, 2*time.Second)

	e.waitStatus(id, "WAITING", 10*time.Second)
	got := e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)
	require.Equal(t, "timer", got["waitingFor"])
	wake, err := time.Parse(time.RFC3339Nano, got["wakeAt"].(string))
	require.NoError(t, err)
	require.True(t, wake.Equal(waiting.WakeAt), "REST shows the wake of agent.waiting: %s, %s", wake, waiting.WakeAt)

	s.until(t, "agent.completed", time.Minute)
	s.close()
	done := e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)
	require.Equal(t, "COMPLETED", done["status"])
	require.Empty(t, done["waitingFor"], "only a waiting execution shows what it waits for")
}
