package conformance_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestToolApprovalsScenario checks what the approvals scenario leaves
// behind (TestRuntimesAgree checks that Temporal leaves the same): the
// approved calls ran, the forbidden and the rejected one did not and say
// why, and agent.waiting listed the calls waiting.
func TestToolApprovalsScenario(t *testing.T) {
	rec := runMemory(t, scenarioNamed(t, "tool approvals"))
	require.Equal(t, "COMPLETED", rec.Status)
	calls := strings.Join(rec.ToolCalls, "\n")
	require.Regexp(t, `call_a echo .* completed .*echo: one`, calls)
	require.Regexp(t, `call_b big .* error .*forbidden by this execution's tool policy`, calls)
	require.Regexp(t, `call_c echo .* completed .*echo: two`, calls, "always approved: call_c ran without its own decision")
	require.Regexp(t, `call_d block .* rejected .*Their reason: not now`, calls)

	var approvals, waits []string
	for _, e := range rec.Entries {
		if strings.Contains(e, " approval ") {
			approvals = append(approvals, e)
		}
	}
	require.Len(t, approvals, 2)
	require.Contains(t, approvals[0], `"always":true`)
	require.Contains(t, approvals[0], `"toolCallId":"call_a"`)
	require.Contains(t, approvals[1], `"decision":"reject"`)
	for _, e := range rec.Events {
		if strings.HasPrefix(e, "agent.waiting ") {
			waits = append(waits, e)
		}
		require.NotRegexp(t, `task.started .*"kind":"block"`, e, "the rejected call never runs")
	}
	require.Len(t, waits, 2)
	require.Regexp(t, `"pendingToolCalls":\[\{"arguments":\{"text":"one"\},"risk":"medium","toolCallId":"call_a","toolName":"echo"\},\{.*"toolCallId":"call_c"`, waits[0])
	require.Contains(t, waits[0], `"reason":"approval"`)
	require.Contains(t, waits[1], `"toolCallId":"call_d"`)
	require.NotContains(t, waits[1], `"toolCallId":"call_c"`)
}
