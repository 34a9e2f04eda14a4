package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// The AG-UI 1.0 events the gateway sends, as @ag-ui/core's schemas define
// them: the fields each type may carry (these types), and those it must
// (requiredAGUIFields). Every event is decoded with unknown fields
// refused, so a field the schema does not have, or a missing required
// one, fails here.
type (
	aguiBase struct {
		Type      string          `json:"type"`
		Timestamp *int64          `json:"timestamp,omitempty"`
		RawEvent  json.RawMessage `json:"rawEvent,omitempty"`
	}
	aguiRunStarted struct {
		aguiBase
		ThreadID    string          `json:"threadId"`
		RunID       string          `json:"runId"`
		ParentRunID string          `json:"parentRunId,omitempty"`
		Input       json.RawMessage `json:"input,omitempty"`
	}
	aguiRunFinished struct {
		aguiBase
		ThreadID string          `json:"threadId"`
		RunID    string          `json:"runId"`
		Result   json.RawMessage `json:"result,omitempty"`
		Outcome  *struct {
			Type       string `json:"type"`
			Interrupts []struct {
				ID             string          `json:"id"`
				Reason         string          `json:"reason"`
				Message        string          `json:"message,omitempty"`
				ToolCallID     string          `json:"toolCallId,omitempty"`
				ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
				ExpiresAt      string          `json:"expiresAt,omitempty"`
				Metadata       json.RawMessage `json:"metadata,omitempty"`
			} `json:"interrupts,omitempty"`
		} `json:"outcome,omitempty"`
	}
	aguiRunError struct {
		aguiBase
		Message string `json:"message"`
		Code    string `json:"code,omitempty"`
	}
	aguiStep struct {
		aguiBase
		StepName string `json:"stepName"`
	}
	aguiMessageStart struct {
		aguiBase
		MessageID string `json:"messageId"`
		Role      string `json:"role"`
	}
	aguiMessageContent struct {
		aguiBase
		MessageID string `json:"messageId"`
		Delta     string `json:"delta"`
	}
	aguiMessageEnd struct {
		aguiBase
		MessageID string `json:"messageId"`
	}
	aguiToolCallStart struct {
		aguiBase
		ToolCallID      string `json:"toolCallId"`
		ToolCallName    string `json:"toolCallName"`
		ParentMessageID string `json:"parentMessageId,omitempty"`
	}
	aguiToolCallArgs struct {
		aguiBase
		ToolCallID string `json:"toolCallId"`
		Delta      string `json:"delta"`
	}
	aguiToolCallEnd struct {
		aguiBase
		ToolCallID string `json:"toolCallId"`
	}
	aguiToolCallResult struct {
		aguiBase
		MessageID  string  `json:"messageId"`
		ToolCallID string  `json:"toolCallId"`
		Content    *string `json:"content"`
		Role       string  `json:"role,omitempty"`
	}
	aguiCustom struct {
		aguiBase
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	}
)

// aguiTypes are the event types the gateway may send, each with its
// shape.
var aguiTypes = map[string]func() any{
	"RUN_STARTED": func() any { return &aguiRunStarted{} }, "RUN_FINISHED": func() any { return &aguiRunFinished{} },
	"RUN_ERROR": func() any { return &aguiRunError{} }, "STEP_STARTED": func() any { return &aguiStep{} },
	"STEP_FINISHED": func() any { return &aguiStep{} }, "TEXT_MESSAGE_START": func() any { return &aguiMessageStart{} },
	"TEXT_MESSAGE_CONTENT": func() any { return &aguiMessageContent{} }, "TEXT_MESSAGE_END": func() any { return &aguiMessageEnd{} },
	"REASONING_START": func() any { return &aguiMessageEnd{} }, "REASONING_MESSAGE_START": func() any { return &aguiMessageStart{} },
	"REASONING_MESSAGE_CONTENT": func() any { return &aguiMessageContent{} }, "REASONING_MESSAGE_END": func() any { return &aguiMessageEnd{} },
	"REASONING_END": func() any { return &aguiMessageEnd{} }, "TOOL_CALL_START": func() any { return &aguiToolCallStart{} },
	"TOOL_CALL_ARGS": func() any { return &aguiToolCallArgs{} }, "TOOL_CALL_END": func() any { return &aguiToolCallEnd{} },
	"TOOL_CALL_RESULT": func() any { return &aguiToolCallResult{} }, "CUSTOM": func() any { return &aguiCustom{} },
}

// decodeAGUI decodes one event strictly into its type and checks its
// required fields are present.
func decodeAGUI(t *testing.T, data string) (string, any) {
	t.Helper()
	var head struct{ Type string }
	require.NoError(t, json.Unmarshal([]byte(data), &head), data)
	mk, ok := aguiTypes[head.Type]
	require.True(t, ok, "unknown AG-UI event type %q: %s", head.Type, data)
	v := mk()
	dec := json.NewDecoder(bytes.NewReader([]byte(data)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "%s does not match its schema: %s", head.Type, data)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &fields))
	for _, name := range requiredAGUIFields(v) {
		require.Contains(t, fields, name, "%s lacks %s: %s", head.Type, name, data)
	}
	if c, ok := v.(*aguiMessageContent); ok {
		require.NotEmpty(t, c.Delta, "a content delta must not be empty: %s", data)
	}
	return head.Type, v
}

// requiredAGUIFields are the JSON names of v's fields tagged required.
func requiredAGUIFields(v any) []string {
	var out []string
	switch v.(type) {
	case *aguiRunStarted, *aguiRunFinished:
		out = []string{"threadId", "runId"}
	case *aguiRunError:
		out = []string{"message"}
	case *aguiStep:
		out = []string{"stepName"}
	case *aguiMessageStart:
		out = []string{"messageId", "role"}
	case *aguiMessageContent:
		out = []string{"messageId", "delta"}
	case *aguiMessageEnd:
		out = []string{"messageId"}
	case *aguiToolCallStart:
		out = []string{"toolCallId", "toolCallName"}
	case *aguiToolCallArgs, *aguiToolCallEnd:
		out = []string{"toolCallId"}
	case *aguiToolCallResult:
		out = []string{"messageId", "toolCallId", "content"}
	case *aguiCustom:
		out = []string{"name"}
	}
	return out
}

// aguiTranscript is a checked AG-UI stream, in the order received.
type aguiTranscript struct {
	types     []string
	events    []any
	text      []string          // each text message's content, in order
	reasoning []string          // each reasoning message's content
	args      map[string]string // tool call ID -> arguments
	names     map[string]string // tool call ID -> tool name
	results   map[string]string // tool call ID -> result content
	runs      []string
	finished  []*aguiRunFinished
}

// checkAGUI decodes every event and checks the stream is one AG-UI
// clients accept: runs do not overlap and nothing is sent outside one;
// every message, reasoning block, tool call and step that starts ends
// before its run does, and content goes only to open ones; a result
// names a call that was made.
func checkAGUI(t *testing.T, evs []sseEvent) *aguiTranscript {
	t.Helper()
	tr := &aguiTranscript{args: map[string]string{}, names: map[string]string{}, results: map[string]string{}}
	var (
		run             string
		text, reasoning = map[string]*strings.Builder{}, map[string]*strings.Builder{}
		reasoningBlocks = map[string]bool{}
		calls, steps    = map[string]bool{}, map[string]int{}
	)
	for i, raw := range evs {
		typ, v := decodeAGUI(t, raw.Data)
		tr.types, tr.events = append(tr.types, typ), append(tr.events, v)
		at := fmt.Sprintf("event %d (%s): %s", i, typ, raw.Data)
		if typ != "RUN_STARTED" {
			require.NotEmpty(t, run, "outside a run: %s", at)
		}
		switch e := v.(type) {
		case *aguiRunStarted:
			require.Empty(t, run, "a run started inside another: %s", at)
			run = e.RunID
			require.NotContains(t, tr.runs, run, "run IDs are unique")
			tr.runs = append(tr.runs, run)
		case *aguiRunFinished, *aguiRunError:
			require.Empty(t, calls, "tool calls open at the end of the run: %s", at)
			require.Empty(t, steps, "steps open at the end of the run: %s", at)
			for id, b := range text {
				require.Failf(t, "open message", "text message %s (%q) open at %s", id, b.String(), at)
			}
			require.Empty(t, reasoning, "reasoning open at %s", at)
			if f, ok := e.(*aguiRunFinished); ok {
				require.Equal(t, run, f.RunID, at)
				tr.finished = append(tr.finished, f)
			}
			run = ""
		case *aguiStep:
			if typ == "STEP_STARTED" {
				steps[e.StepName]++
			} else {
				require.Positive(t, steps[e.StepName], "a step finished that had not started: %s", at)
				if steps[e.StepName]--; steps[e.StepName] == 0 {
					delete(steps, e.StepName)
				}
			}
		case *aguiMessageStart:
			open := text
			if typ == "REASONING_MESSAGE_START" {
				require.True(t, reasoningBlocks[e.MessageID], "reasoning message outside REASONING_START: %s", at)
				require.Equal(t, "reasoning", e.Role)
				open = reasoning
			} else {
				require.Equal(t, "assistant", e.Role)
			}
			require.NotContains(t, open, e.MessageID, "started twice: %s", at)
			open[e.MessageID] = &strings.Builder{}
		case *aguiMessageContent:
			open := map[bool]map[string]*strings.Builder{true: reasoning, false: text}[typ == "REASONING_MESSAGE_CONTENT"]
			b, ok := open[e.MessageID]
			require.True(t, ok, "content for a message not open: %s", at)
			b.WriteString(e.Delta)
		case *aguiMessageEnd:
			switch typ {
			case "REASONING_START":
				reasoningBlocks[e.MessageID] = true
			case "REASONING_END":
				require.True(t, reasoningBlocks[e.MessageID], at)
				require.NotContains(t, reasoning, e.MessageID, "reasoning block ended with its message open: %s", at)
			case "REASONING_MESSAGE_END":
				b, ok := reasoning[e.MessageID]
				require.True(t, ok, at)
				tr.reasoning = append(tr.reasoning, b.String())
				delete(reasoning, e.MessageID)
			default:
				b, ok := text[e.MessageID]
				require.True(t, ok, "a message ended that was not open: %s", at)
				tr.text = append(tr.text, b.String())
				delete(text, e.MessageID)
			}
		case *aguiToolCallStart:
			require.False(t, calls[e.ToolCallID], "started twice: %s", at)
			calls[e.ToolCallID], tr.names[e.ToolCallID] = true, e.ToolCallName
		case *aguiToolCallArgs:
			require.True(t, calls[e.ToolCallID], "arguments of a call not open: %s", at)
			tr.args[e.ToolCallID] += e.Delta
		case *aguiToolCallEnd:
			require.True(t, calls[e.ToolCallID], "a call ended that was not open: %s", at)
			delete(calls, e.ToolCallID)
		case *aguiToolCallResult:
			require.Contains(t, tr.names, e.ToolCallID, "a result for a call never made: %s", at)
			require.Equal(t, "tool", e.Role)
			tr.results[e.ToolCallID] = *e.Content
		}
	}
	return tr
}

// TestAGUIStreamShapes runs an execution that thinks, writes, calls a
// tool and answers, and reads its AG-UI stream: every event decodes into
// its AG-UI 1.0 shape here and passes @ag-ui/core's own schemas (the
// Node harness's validate-agui.js), the stream obeys the protocol's
// ordering, and it
// says what the model said. A client that resumes with Last-Event-ID from
// the middle of a message gets the rest, so that what it saw before and
// after is the whole stream, with nothing started twice.
func TestAGUIStreamShapes(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 40}
	srv := providertest.NewServer(t,
		reply(providertest.NewAnthropicStream(model, usage).
			Thinking("sig-1", "The notes ", "should say.").
			Text("Let me ", "search.").
			ToolUse("toolu_1", demo.SearchNotesTool, `{"query":`, ` "history limit"}`).
			End("tool_use", 30)),
		reply(providertest.NewAnthropicStream(model, usage).
			Text("Agentree ", "continues ", "as new.").
			End("end_turn", 12)),
	)
	e := newAnthropicEnv(t, srv)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "How does Agentree avoid the history limit?",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
		"tools":  []string{demo.SearchNotesTool}, "config": map[string]any{"mode": "one-shot"},
	})
	id := ex["id"].(string)
	path := base + "/" + id + "/ag-ui"
	all := e.openStream(t, e.keyA, path, "").rest(t, time.Minute)
	require.NotEmpty(t, all)

	tr := checkAGUI(t, all)
	requireAGUIValid(t, all)
	require.Equal(t, "RUN_STARTED", tr.types[0])
	require.Equal(t, id, tr.events[0].(*aguiRunStarted).ThreadID, "the thread is the execution")
	require.Equal(t, []string{"The notes should say."}, tr.reasoning)
	require.Equal(t, []string{"Let me search.", "Agentree continues as new."}, tr.text)
	require.Len(t, tr.names, 1)
	for callID, name := range tr.names {
		require.Equal(t, demo.SearchNotesTool, name)
		require.JSONEq(t, `{"query": "history limit"}`, tr.args[callID])
		require.NotEmpty(t, tr.results[callID], "the tool's result is in the stream")
	}
	require.Contains(t, tr.types, "STEP_STARTED")
	require.Len(t, tr.finished, 1)
	require.Equal(t, "RUN_FINISHED", tr.types[len(tr.types)-1])
	require.Equal(t, "success", tr.finished[0].Outcome.Type)

	// Resume from inside the second text message.
	cut := -1
	for i, ev := range all {
		if ev.ID > 0 && strings.Contains(ev.Data, `"delta":"continues `) {
			cut = i
			break
		}
	}
	require.Positive(t, cut, "the answer's second delta closes a stored event")
	resumed := e.openStream(t, e.keyA, path, strconv.FormatInt(all[cut].ID, 10)).rest(t, time.Minute)
	require.Equal(t, datas(all[cut+1:]), datas(resumed), "the resumed stream is the rest of the stream")
	require.Equal(t, tr.types, checkAGUI(t, append(append([]sseEvent{}, all[:cut+1]...), resumed...)).types)

	// Another organization's key finds no such execution.
	resp, cancel := e.streamRequest(t, e.keyB, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/ag-ui", "")
	defer cancel()
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func datas(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Data
	}
	return out
}

// TestAGUIApprovalInterrupt: a call the tool policy asks approval for
// ends its run with RUN_FINISHED whose outcome is an interrupt naming the
// call; once approved, the next run sends the call's TOOL_CALL_RESULT
// (without starting the call again) and the answer.
func TestAGUIApprovalInterrupt(t *testing.T) {
	const model = responsesModel
	srv := providertest.NewServer(t, countingReplies()...)
	e := newAskEnv(t, srv)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "How many words in 'three little words'?",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
		"tools":  []string{demo.WordCountTool}, "config": map[string]any{"mode": "one-shot"},
	})
	id := ex["id"].(string)
	stream := e.openStream(t, e.keyA, base+"/"+id+"/ag-ui", "")
	var first []sseEvent
	deadline := time.Now().Add(time.Minute)
	for {
		ev, ok := stream.next(t, time.Until(deadline))
		require.True(t, ok, "the stream ended before the interrupt")
		first = append(first, ev)
		if strings.Contains(ev.Data, `"RUN_FINISHED"`) {
			break
		}
	}
	tr := checkAGUI(t, first)
	require.Len(t, tr.finished, 1)
	out := tr.finished[0].Outcome
	require.NotNil(t, out)
	require.Equal(t, "interrupt", out.Type)
	require.Len(t, out.Interrupts, 1)
	intr := out.Interrupts[0]
	require.Equal(t, "tool_call", intr.Reason)
	require.Contains(t, tr.names, intr.ToolCallID, "the interrupt names the call the stream showed")
	require.JSONEq(t, `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`,
		string(intr.ResponseSchema))
	require.Empty(t, tr.results, "nothing ran before the approval")

	e.ok(e.keyA, http.MethodPost, base+"/"+id+"/tool-calls/"+intr.ToolCallID+"/approval", map[string]any{"decision": "approve"})
	rest := stream.rest(t, time.Minute)
	tr = checkAGUI(t, append(first, rest...))
	requireAGUIValid(t, append(first, rest...))
	require.Len(t, tr.runs, 2, "the approval starts a second run")
	require.Equal(t, "3 words", tr.results[intr.ToolCallID], "the second run reports the approved call's result")
	require.Equal(t, []string{"Counting.", "Three words."}, tr.text)
	starts := 0
	for _, typ := range tr.types {
		if typ == "TOOL_CALL_START" {
			starts++
		}
	}
	require.Equal(t, 1, starts, "the call is not started again in the run that resumes it")
	require.Equal(t, "success", tr.finished[1].Outcome.Type)
}
