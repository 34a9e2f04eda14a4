package agentsdk_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestClientToolsValidate: client tool specs are refused, naming the
// field, for a bad or repeated name, a worker tool's name, a schema that
// is not an object schema, and past the bounds; good ones pass.
func TestClientToolsValidate(t *testing.T) {
	obj := []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	good := agentsdk.ToolSpec{Name: "get_weather", Description: "The weather.", Parameters: obj}
	workers := agentsdk.Tools{"echo": {Name: "echo"}}
	require.NoError(t, agentsdk.Config{ClientTools: []agentsdk.ToolSpec{good}}.Validate(nil, workers))
	require.True(t, agentsdk.Config{ClientTools: []agentsdk.ToolSpec{good}}.IsClientTool("get_weather"))

	for _, tc := range []struct {
		name string
		cfg  agentsdk.Config
		want string
	}{
		{"bad name", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "get weather", Parameters: obj}}}, "clientTools[0].name must be"},
		{"twice", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{good, good}}, `clientTools[1].name "get_weather" is given twice`},
		{"a worker tool in tools", agentsdk.Config{Tools: []string{"get_weather"}, ClientTools: []agentsdk.ToolSpec{good}},
			`clientTools[0].name "get_weather" is the name of a worker tool`},
		{"a worker tool the runtime has", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "echo", Parameters: obj}}},
			`clientTools[0].name "echo" is the name of a worker tool`},
		{"not an object schema", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "f", Parameters: []byte(`{"type":"string"}`)}}},
			"clientTools[0].parameters must be an object schema"},
		{"no schema", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "f"}}}, "clientTools[0].parameters must be a JSON Schema object"},
		{"schema too big", agentsdk.Config{ClientTools: []agentsdk.ToolSpec{{Name: "f",
			Parameters: []byte(`{"type":"object","description":"` + strings.Repeat("x", agentsdk.MaxClientToolSchema) + `"}`)}}}, "over the 16384 allowed"},
		{"too many", agentsdk.Config{ClientTools: make([]agentsdk.ToolSpec, agentsdk.MaxClientTools+1)}, "clientTools has 65 tools, over the 64 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate(nil, workers)
			require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestToolCallMergeKeepsAnsweredClientCall: recording a client call as
// awaiting its output again (a retried store operation) never reopens a
// call that has its output.
func TestToolCallMergeKeepsAnsweredClientCall(t *testing.T) {
	done := agentsdk.ToolCallRecord{ToolCallID: "c1", Status: agentsdk.ToolCompleted, ResultEntryID: "e1"}
	got := done.Merge(agentsdk.ToolCallRecord{ToolCallID: "c1", Status: agentsdk.ToolAwaitingResult})
	require.Equal(t, agentsdk.ToolCompleted, got.Status)
	require.Equal(t, "e1", got.ResultEntryID)
	first := agentsdk.ToolCallRecord{}.Merge(agentsdk.ToolCallRecord{ToolCallID: "c1", Status: agentsdk.ToolAwaitingResult})
	require.Equal(t, agentsdk.ToolAwaitingResult, first.Status)
}
