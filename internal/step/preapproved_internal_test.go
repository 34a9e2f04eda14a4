package step

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// A bash call whose policy is ask runs without waiting when its command
// is on the operator's safe list, or a standing approval covers it: the
// answer records why, workflow code sees it auto, the record says who
// approved it, and the check before it runs holds it to the list as the
// worker has it then. Any other call still waits.
func TestPreApprovedCallsSkipTheWait(t *testing.T) {
	type bashArgs struct {
		Command string `json:"command"`
	}
	bash := agentsdk.NewTool(agentsdk.ToolBash, "Runs a command.", func(context.Context, agentsdk.ToolInvocation, bashArgs) (string, error) { return "", nil })
	bash.Policy = agentsdk.PolicyAsk
	edit := agentsdk.NewTool("edit_file", "Edits.", func(context.Context, agentsdk.ToolInvocation, bashArgs) (string, error) { return "", nil })
	edit.Policy = agentsdk.PolicyAsk
	tools, err := agentsdk.NewTools(bash, edit)
	require.NoError(t, err)
	d := Deps{Tools: tools, Policy: agentsdk.Operator{SafeCommands: []string{"ls *", "git status"}},
		StandingApproval: func(_ context.Context, _, _ string, call agentsdk.ToolCall) (string, error) {
			if call.Name == "edit_file" {
				return "rule-1", nil
			}
			return "", nil
		}}
	call := func(id, name, cmd string) agentsdk.Block {
		args, _ := json.Marshal(bashArgs{Command: cmd})
		return agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	msg := agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{
		call("safe", agentsdk.ToolBash, "ls -la src"), call("hostile", agentsdk.ToolBash, "ls; rm -rf /"),
		call("other", agentsdk.ToolBash, "git push"), call("standing", "edit_file", "x"),
	}}
	cfg := agentsdk.Config{Tools: []string{agentsdk.ToolBash, "edit_file"}}
	meta := d.answerMeta(context.Background(), "org", "ex", cfg, msg)
	require.Equal(t, []string{"safe"}, meta.SafeCalls)
	require.Equal(t, map[string]string{"standing": "rule-1"}, meta.Standing)

	content, err := json.Marshal(msg)
	require.NoError(t, err)
	metadata, err := json.Marshal(meta)
	require.NoError(t, err)
	ref, err := Ref(agentsdk.Entry{ID: "a", Type: agentsdk.EntryMessage, Role: agentsdk.RoleAssistant, Content: content, Metadata: metadata})
	require.NoError(t, err)
	got := map[string]agentsdk.ToolPolicy{}
	for _, tc := range ref.ToolCalls {
		got[tc.ID] = tc.Policy
	}
	require.Equal(t, map[string]agentsdk.ToolPolicy{"safe": agentsdk.PolicyAuto, "hostile": agentsdk.PolicyAsk,
		"other": agentsdk.PolicyAsk, "standing": agentsdk.PolicyAuto}, got)
	require.Equal(t, agentsdk.PolicyAsk, meta.Policy("safe"), "the recorded policy stays ask")

	now := time.Now()
	require.Equal(t, DecidedBySafeCommands, meta.preApproval("safe", now).DecidedBy)
	require.Equal(t, "rule-1", meta.preApproval("standing", now).StandingApprovalID)
	require.Nil(t, meta.preApproval("hostile", now))

	safe := *msg.Content[0].ToolCall
	require.True(t, d.stillPreApproved(meta, safe))
	d.Policy.SafeCommands = []string{"git status"}
	require.False(t, d.stillPreApproved(meta, safe), "a command the operator took off the list since waits")
}
