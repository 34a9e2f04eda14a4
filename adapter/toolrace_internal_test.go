package adapter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/step"
)

// lookedEarly is pgStore whose look for a call's answer came before
// another run of the call ended it: its first look for the record, or for
// the result entry, finds none.
type lookedEarly struct {
	pgStore
	looked bool
}

func (*lookedEarly) ToolCall(context.Context, string, string, string, string) (agentsdk.ToolCallRecord, error) {
	return agentsdk.ToolCallRecord{}, agentsdk.ErrNotFound
}

func (s *lookedEarly) EntryByKey(ctx context.Context, orgID, executionID, key string) (agentsdk.Entry, error) {
	if !s.looked {
		s.looked = true
		return agentsdk.Entry{}, agentsdk.ErrNotFound
	}
	return s.pgStore.EntryByKey(ctx, orgID, executionID, key)
}

// TestToolCallEndedByAnotherRunIsNotRunAgain: a tool call's local activity
// re-run beside the one its lost workflow task left running looks for the
// call's record and finds none; the first run then ends the call. The
// re-run's start finds the record ended, and it returns that outcome
// without running the tool (a rolling deploy's chaos run saw "tool call
// call_6 started again after it completed").
func TestToolCallEndedByAnotherRunIsNotRunAgain(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "race", "Race")
	require.NoError(t, err)
	ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind, Config: json.RawMessage(`{"tools":["lookup"]}`)})
	require.NoError(t, err)
	user, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, Type: "message", Role: "user",
		Content: mustJSON(t, agentsdk.TextMessage(agentsdk.RoleUser, "Look it up.")), IdempotencyKey: "u"})
	require.NoError(t, err)
	call := agentsdk.ToolCall{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}
	asked, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, ParentID: user.ID, Type: "message", Role: "assistant",
		Content:        mustJSON(t, agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{{Type: agentsdk.BlockToolCall, ToolCall: &call}}}),
		IdempotencyKey: "a"})
	require.NoError(t, err)

	runs := 0
	lookup := agentsdk.FuncTool("lookup", "Looks it up.", `{"type":"object"}`, func(context.Context, agentsdk.ToolInvocation, map[string]any) (string, error) {
		runs++
		return "found again", nil
	})
	tools, err := agentsdk.NewTools(lookup)
	require.NoError(t, err)
	s := &lookedEarly{pgStore: pgStore{es: es}}
	// The first run ended the call after the re-run looked.
	require.NoError(t, s.RecordToolCall(ctx, agentsdk.ToolCallRecord{OrgID: org.ID, ExecutionID: ex.ID, MessageID: asked.ID,
		ToolCallID: call.ID, ToolName: call.Name, Status: agentsdk.ToolCompleted, Input: call.Arguments,
		Output: json.RawMessage(`{"text":"found"}`), StepNumber: 1}))

	out, err := step.ExecuteTool(ctx, step.Deps{Store: s, Tools: tools}, step.ToolInput{OrgID: org.ID, ExecutionID: ex.ID,
		AssistantID: asked.ID, LeafID: asked.ID, ToolCallID: call.ID, Key: "tool/1", StepNumber: 1})
	require.NoError(t, err)
	require.Zero(t, runs, "the tool ran again after another run ended its call")
	require.Equal(t, step.ToolOutcome{ToolCallID: call.ID, Preview: "found"}, out)
	rec, err := pgStore{es: es}.ToolCall(ctx, org.ID, ex.ID, asked.ID, call.ID)
	require.NoError(t, err)
	require.Equal(t, agentsdk.ToolCompleted, rec.Status)
	require.JSONEq(t, `{"text":"found"}`, string(rec.Output))

	// A call answered by its own result entry (RunTool): the first run
	// appended the entry, then ended the record, after the re-run looked.
	call2 := agentsdk.ToolCall{ID: "call_2", Name: "lookup", Arguments: json.RawMessage(`{"q":"y"}`)}
	asked2, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, ParentID: asked.ID, Type: "message", Role: "assistant",
		Content:        mustJSON(t, agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{{Type: agentsdk.BlockToolCall, ToolCall: &call2}}}),
		IdempotencyKey: "a2"})
	require.NoError(t, err)
	result, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, ParentID: asked2.ID, Type: "message", Role: "tool_result",
		Content: mustJSON(t, agentsdk.ToolResultMessage(call2, "found y", false)), IdempotencyKey: "tool/2"})
	require.NoError(t, err)
	require.NoError(t, s.RecordToolCall(ctx, agentsdk.ToolCallRecord{OrgID: org.ID, ExecutionID: ex.ID, MessageID: asked2.ID,
		ToolCallID: call2.ID, ToolName: call2.Name, Status: agentsdk.ToolCompleted, Input: call2.Arguments,
		Output: json.RawMessage(`{"text":"found y"}`), ResultEntryID: result.ID, StepNumber: 2}))
	s.looked = false
	res, err := step.RunTool(ctx, step.Deps{Store: s, Tools: tools}, step.ToolInput{OrgID: org.ID, ExecutionID: ex.ID,
		AssistantID: asked2.ID, LeafID: asked2.ID, ToolCallID: call2.ID, Key: "tool/2", StepNumber: 2})
	require.NoError(t, err)
	require.Zero(t, runs, "the tool ran again after another run ended its call")
	require.Equal(t, result.ID, res.Entry.ID, "the answer is the entry the first run appended")
}
