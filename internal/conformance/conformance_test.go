package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/conformance"
)

// TestRuntimesAgree plays every scenario on the in-memory runtime and on
// the Temporal plugin and requires the same record: entries, tool-call
// records, checkpoints, stream events and final status. A scenario with a
// budget must end PAUSED by it.
func TestRuntimesAgree(t *testing.T) {
	for _, sc := range conformance.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			mem := runMemory(t, sc)
			tmp := runTemporal(t, sc)
			require.NotEmpty(t, mem.Entries)
			require.Equal(t, mem.Status, tmp.Status, "final status")
			require.Equal(t, mem.Entries, tmp.Entries, "entries")
			require.Equal(t, mem.ToolCalls, tmp.ToolCalls, "tool-call records")
			require.Equal(t, mem.Checkpoints, tmp.Checkpoints, "checkpoints")
			require.Equal(t, mem.Events, tmp.Events, "stream events")
			if sc.BudgetCalls > 0 {
				last := tmp.Events[len(tmp.Events)-1]
				require.Equal(t, "PAUSED", tmp.Status)
				require.Contains(t, last, "agent.paused")
				require.Contains(t, last, `"stopReason":"budget"`)
			}
		})
	}
}
