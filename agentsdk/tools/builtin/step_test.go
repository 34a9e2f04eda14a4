package builtin_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// TestBashOutputIsCappedAndKeptWhole runs a command printing 10 MB through
// the same step code as production (agenttest's runtime and store): the
// model sees the head and tail within the execution's toolOutputLimit,
// the tool-call record references the whole output in the content store,
// and the live stream carried every byte.
func TestBashOutputIsCappedAndKeptWhole(t *testing.T) {
	const size = 10 << 20
	command := `echo HEAD-MARK; head -c ` + strconv.Itoa(size) + ` /dev/zero | tr '\0' 'x'; echo; echo TAIL-MARK`
	args, err := json.Marshal(builtin.BashArgs{Command: command})
	require.NoError(t, err)
	tools, err := builtin.Tools(builtin.Options{Root: t.TempDir()})
	require.NoError(t, err)
	x, err := agenttest.Start(agenttest.Options{
		Agent: react.New(react.Options{}),
		Providers: []agentsdk.Provider{scripted.New(scripted.Turns(
			scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_big", Name: builtin.BashTool, Arguments: args}}},
			scripted.Turn{Text: "That was a lot of x."},
		))},
		Tools: tools,
		// The operator's word lifts bash's own ask; a tenant's could not.
		ToolPolicy: agentsdk.Policies{builtin.BashTool: agentsdk.PolicyAuto},
		Config:     agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}, Tools: builtin.ToolNames, Mode: agentsdk.ModeOneShot},
		UserPrompt: "print a lot",
	})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status, x.Reason)

	whole := "HEAD-MARK\n" + strings.Repeat("x", size) + "\nTAIL-MARK\n[exit status 0; isolation: " + jailed + "]"

	msgs, err := x.Messages()
	require.NoError(t, err)
	var shown string
	for _, m := range msgs {
		if m.Role == agentsdk.RoleToolResult {
			require.False(t, m.IsError, m.Text())
			shown = m.Text()
		}
	}
	require.LessOrEqual(t, len(shown), agentsdk.DefaultToolOutputLimit)
	require.True(t, strings.HasPrefix(shown, "HEAD-MARK\nxxx"), shown[:20])
	require.True(t, strings.HasSuffix(shown, "xxx\nTAIL-MARK\n[exit status 0; isolation: "+jailed+"]"))
	require.Contains(t, shown, "omitted: the full output is kept in the content store")

	records := x.Store.ToolCalls()
	require.Len(t, records, 1)
	rec := records[0]
	require.True(t, rec.Truncated)
	require.Equal(t, int64(len(whole)), rec.OutputSize)
	kept, ok := x.Store.Content(rec.OutputSHA256)
	require.True(t, ok, "the whole output is in the content store")
	require.Equal(t, len(whole), len(kept))
	require.True(t, string(kept) == whole, "the content store holds every byte")

	var streamed strings.Builder
	for _, ev := range x.Store.Events() {
		if ev.Name != event.NameData {
			continue
		}
		var d event.Data
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		if d.Data.Type == event.TypeTerminal {
			require.Equal(t, "call_big", d.TaskExecutionID)
			require.Equal(t, "stdout", d.Data.Stream)
			streamed.WriteString(d.Data.Output)
		}
	}
	require.Equal(t, len("HEAD-MARK\n")+size+len("\nTAIL-MARK\n"), streamed.Len(), "the live stream carried every byte")
}
