package conformance_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/conformance"
)

// TestClientToolsScenario checks what the client tools scenario leaves
// behind (TestRuntimesAgree checks that Temporal leaves the same): the
// worker ran echo, no worker ran lookup, the execution waited for the
// client's outputs, listing the calls still waiting, and each output is
// its call's tool result, before the model's next answer.
func TestClientToolsScenario(t *testing.T) {
	rec := runMemory(t, scenarioNamed(t, "client tool calls wait for their outputs"))
	require.Equal(t, "COMPLETED", rec.Status, "%s", strings.Join(rec.Entries, "\n"))
	calls := strings.Join(rec.ToolCalls, "\n")
	require.Regexp(t, `call_w1 echo .* completed .*echo: mine`, calls)
	require.Regexp(t, `call_c1 lookup .* completed .*first`, calls)
	require.Regexp(t, `call_c2 lookup .* completed .*second`, calls)

	var waits []string
	for _, e := range rec.Events {
		if strings.HasPrefix(e, "agent.waiting ") {
			waits = append(waits, e)
		}
		require.NotRegexp(t, `task.started .*"kind":"lookup"`, e, "no worker runs a client tool")
	}
	require.Len(t, waits, 2, "%s", strings.Join(rec.Events, "\n"))
	require.Contains(t, waits[0], `"reason":"client_tool"`)
	require.Regexp(t, `"toolCallId":"call_c1".*"toolCallId":"call_c2"`, waits[0])
	require.Contains(t, waits[1], `"toolCallId":"call_c1"`)
	require.NotContains(t, waits[1], `"toolCallId":"call_c2"`, "call_c2 has its output")

	all := strings.Join(rec.Entries, "\n")
	w, c2, c1, answer := strings.Index(all, "echo: mine"), strings.Index(all, "second"), strings.Index(all, "first"), strings.Index(all, "Both looked up.")
	require.True(t, w >= 0 && c2 > w && c1 > c2 && answer > c1, "worker result, then the outputs as they came, then the answer:\n%s", all)
}

// scenarioNamed is the conformance scenario called name.
func scenarioNamed(t *testing.T, name string) conformance.Scenario {
	t.Helper()
	for _, s := range conformance.Scenarios() {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no scenario", "no conformance scenario is called %q", name)
	return conformance.Scenario{}
}
