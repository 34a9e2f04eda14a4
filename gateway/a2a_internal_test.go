package gateway

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// TestA2AStateMapping: every execution status has its A2A state, and a
// stream or a blocking send ends exactly on the states that wait for the
// caller or have ended.
func TestA2AStateMapping(t *testing.T) {
	want := map[entrystore.Status]string{
		entrystore.StatusPending:    "submitted",
		entrystore.StatusRunning:    "working",
		entrystore.StatusCancelling: "working",
		entrystore.StatusWaiting:    "input-required",
		entrystore.StatusCompleted:  "completed",
		entrystore.StatusFailed:     "failed",
		entrystore.StatusCancelled:  "canceled",
		entrystore.StatusPaused:     "unknown",
	}
	for st, state := range want {
		require.Equal(t, state, a2aState(st), "%s", st)
		require.Equal(t, st != entrystore.StatusPending && st != entrystore.StatusRunning && st != entrystore.StatusCancelling,
			a2aFinal(a2aState(st)), "%s ends a turn", st)
	}
	for _, name := range []string{event.NameWaiting, event.NameCompleted, event.NameFailed, event.NameCancelled, event.NamePaused} {
		require.True(t, a2aEndsTurn(name), name)
	}
	for _, name := range []string{event.NameStarted, event.NameResumed, event.NameToken, event.NameCheckpoint} {
		require.False(t, a2aEndsTurn(name), name)
	}
}

// TestA2AApprovalIsInputRequiredWithTheCall: a task waiting for an
// approval says which call, in words and as data.
func TestA2AApprovalIsInputRequiredWithTheCall(t *testing.T) {
	m := approvalMessage("ex-1", []entrystore.ToolCall{{ToolCallID: "toolu_1", ToolName: "word_count", Input: json.RawMessage(`{"text": "a b"}`)}})
	require.Equal(t, "agent", m.Role)
	require.Contains(t, m.Parts[0].Text, `word_count with {"text":"a b"}`)
	require.Equal(t, "data", m.Parts[1].Kind)
	require.JSONEq(t, `{"pendingToolCalls":[{"toolCallId":"toolu_1","toolName":"word_count","arguments":{"text":"a b"}}]}`, string(m.Parts[1].Data))
}

// TestA2AInputRefusals: what message/send refuses, with the spec's codes.
func TestA2AInputRefusals(t *testing.T) {
	text := []a2aPart{{Kind: "text", Text: "hi"}}
	for name, c := range map[string]struct {
		m    *a2aMessage
		code int
	}{
		"no message":    {nil, rpcInvalidParams},
		"agent role":    {&a2aMessage{MessageID: "1", Role: "agent", Parts: text}, rpcInvalidParams},
		"no messageId":  {&a2aMessage{Role: "user", Parts: text}, rpcInvalidParams},
		"no parts":      {&a2aMessage{MessageID: "1", Role: "user"}, rpcInvalidParams},
		"blank text":    {&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "text", Text: " "}}}, rpcInvalidParams},
		"file":          {&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "file", File: json.RawMessage(`{}`)}}}, a2aContentTypeUnknown},
		"unknown kind":  {&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "video"}}}, rpcInvalidParams},
		"data, no vote": {&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "data", Data: json.RawMessage(`{"x":1}`)}}}, rpcInvalidParams},
	} {
		_, err := a2aInputOf(c.m)
		var e *rpcError
		require.ErrorAs(t, err, &e, name)
		require.Equal(t, c.code, e.Code, name)
	}
	in, err := a2aInputOf(&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "text", Text: "a"}, {Kind: "text", Text: "b"}}})
	require.NoError(t, err)
	require.Equal(t, "a\nb", in.text)
	in, err = a2aInputOf(&a2aMessage{MessageID: "1", Role: "user", Parts: []a2aPart{{Kind: "data", Data: json.RawMessage(`{"approved": false, "reason": "no"}`)}}})
	require.NoError(t, err)
	require.False(t, *in.decision.Approved)
	require.Equal(t, "no", in.decision.Reason)
}

// TestA2ARetriedCallTextSentOnce: a model call cut after its first token
// and made again streams its text from the start; the A2A stream sends
// each byte once, the first chunk replacing the artifact, the rest
// appended.
func TestA2ARetriedCallTextSentOnce(t *testing.T) {
	m := &a2aStreamer{exec: "ex", shown: map[string]int{}}
	var text string
	var appends []bool
	for i, tok := range []event.Token{
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "Survives "},
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "Survives "},
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "the kill.", Offset: 9},
	} {
		data, err := json.Marshal(tok)
		require.NoError(t, err)
		for _, ev := range m.mapEvent(entrystore.StreamEvent{ID: int64(i + 1), Event: event.NameToken, Data: data, CreatedAt: time.Now()}) {
			u := ev.(a2aArtifactUpdate)
			text += u.Artifact.Parts[0].Text
			appends = append(appends, u.Append)
		}
	}
	require.Equal(t, "Survives the kill.", text)
	require.Equal(t, []bool{false, true}, appends)
}

// TestA2ARPCIDs: a request ID is a string or a number.
func TestA2ARPCIDs(t *testing.T) {
	for _, id := range []string{`1`, `"a"`} {
		require.True(t, validRPCID(json.RawMessage(id)), id)
	}
	for _, id := range []string{``, `null`, `{}`, `[1]`, `true`} {
		require.False(t, validRPCID(json.RawMessage(id)), id)
	}
	require.Equal(t, a2aPushNotSupported, unservedMethod("tasks/pushNotificationConfig/set").Code)
	require.Equal(t, rpcMethodNotFound, unservedMethod("tasks/list").Code)
}
