package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// reply is one streamed Messages API answer of the fake model server.
func reply(body string) providertest.Reply { return providertest.Reply{Body: body} }

// newAnthropicEnv is a gateway and a worker whose one model provider is
// the official Anthropic client pointed at srv (a fake server speaking
// Anthropic's wire protocol), with the demo tools.
func newAnthropicEnv(t *testing.T, srv *providertest.Server) *env {
	t.Helper()
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "test-key"})
	require.NoError(t, err)
	return newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools()})
}

// TestSSEEventsDecodeIntoTypes runs one multi-turn execution over REST
// against a fake Anthropic server (through the official SDK, so the
// stream has thinking, text and tool-call argument deltas) with the demo
// tools, and decodes EVERY event of its consolidated SSE stream into its
// agentsdk/event type with unknown fields refused: a field a producer adds
// without the type, or a name without a type, fails here. It also checks
// the lifecycle order, that each tool call's events agree, and that the
// tokens are the assistant's text, turn by turn.
func TestSSEEventsDecodeIntoTypes(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 40}
	srv := providertest.NewServer(t,
		// First question: think, search the notes, answer.
		reply(providertest.NewAnthropicStream(model, usage).
			Thinking("sig-1", "The notes ", "should say.").
			Text("Let me ", "search.").
			ToolUse("toolu_1", demo.SearchNotesTool, `{"query":`, ` "history limit"}`).
			End("tool_use", 30)),
		reply(providertest.NewAnthropicStream(model, usage).
			Text("Agentree ", "continues ", "as new.").
			End("end_turn", 12)),
		// The follow-up: two tool turns, then max turns ends it.
		reply(providertest.NewAnthropicStream(model, usage).
			Text("Counting.").
			ToolUse("toolu_2", demo.WordCountTool, `{"text":`, ` "continue as new"}`).
			End("tool_use", 20)),
		reply(providertest.NewAnthropicStream(model, usage).
			Text("Three ", "words; ", "searching again.").
			ToolUse("toolu_3", demo.SearchNotesTool, `{"query": "checkpoint"}`).
			End("tool_use", 20)),
	)
	e := newAnthropicEnv(t, srv)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"

	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "How does Agentree avoid the history limit?",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
		"tools":  []string{demo.SearchNotesTool, demo.WordCountTool},
		"config": map[string]any{"mode": "multi-turn", "maxTurns": 2},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	s := e.openStream(t, e.keyA, path+"/stream/consolidated", "")
	evs := s.until(t, event.NameWaiting, time.Minute)
	e.waitStatus(id, "WAITING", 10*time.Second)
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "How many words is that?"},
	})
	evs = append(evs, s.rest(t, time.Minute)...)

	var (
		lifecycle   []string
		checkpoints []int
		dataTypes   = map[string]int{}
		started     = map[string]string{} // task started: ID -> tool
		finished    = map[string]bool{}
		results     = map[string]bool{}
		tokens      strings.Builder
		byCall      = map[string]*strings.Builder{}
		callOrder   []string
		last        event.Event
	)
	for _, raw := range evs {
		got, err := event.Decode(raw.Event, []byte(raw.Data))
		require.NoError(t, err, "event %d %s: %s", raw.ID, raw.Event, raw.Data)
		require.Equal(t, raw.Event, got.Name())
		last = got
		switch ev := got.(type) {
		case *event.Started, *event.Waiting, *event.Resumed, *event.Completed:
			lifecycle = append(lifecycle, ev.Name())
		case *event.Checkpoint:
			require.Equal(t, id, ev.AgentExecutionID)
			checkpoints = append(checkpoints, ev.Sequence)
			lifecycle = append(lifecycle, ev.Name())
		case *event.Token:
			require.Equal(t, id, ev.AgentExecutionID)
			require.NotEmpty(t, ev.TaskExecutionID, "a token names its model call")
			tokens.WriteString(ev.Data)
			if byCall[ev.TaskExecutionID] == nil {
				byCall[ev.TaskExecutionID] = &strings.Builder{}
				callOrder = append(callOrder, ev.TaskExecutionID)
			}
			byCall[ev.TaskExecutionID].WriteString(ev.Data)
		case *event.Data:
			require.Equal(t, id, ev.AgentExecutionID)
			dataTypes[ev.Data.Type]++
			switch ev.Data.Type {
			case event.TypeThinkingDelta:
				require.NotEmpty(t, ev.Data.Text)
			case event.TypeToolCallStart, event.TypeToolCallEnd:
				require.NotNil(t, ev.Data.ToolCall)
				require.NotEmpty(t, ev.Data.ToolCall.ID)
				require.NotEmpty(t, ev.Data.ToolCall.Name)
			case event.TypeToolCallDelta:
				require.NotNil(t, ev.Data.ToolCall)
			case event.TypeToolResult:
				require.NotNil(t, ev.Data.Result)
				require.NotNil(t, ev.Data.ToolCall)
				require.False(t, ev.Data.Result.IsError, "%s", raw.Data)
				require.NotEmpty(t, ev.Data.Result.Preview)
				results[ev.Data.ToolCall.ID] = true
			default:
				require.Fail(t, "unexpected data type", "%s", raw.Data)
			}
		case *event.TaskStarted:
			require.Equal(t, id, ev.AgentExecutionID)
			require.True(t, json.Valid(ev.Arguments), "%s", raw.Data)
			started[ev.TaskExecutionID] = ev.Kind
		case *event.TaskCompleted:
			require.Equal(t, started[ev.TaskExecutionID], ev.Kind, "task.completed follows its task.started")
			finished[ev.TaskExecutionID] = true
		default:
			require.Fail(t, "unexpected event", "%s: %s", raw.Event, raw.Data)
		}
	}

	// Lifecycle: started, checkpoints, waiting; resumed, checkpoints,
	// completed (max turns).
	var order []string
	for _, n := range lifecycle {
		if n != event.NameCheckpoint || order[len(order)-1] != event.NameCheckpoint {
			order = append(order, n)
		}
	}
	require.Equal(t, []string{event.NameStarted, event.NameCheckpoint, event.NameWaiting, event.NameResumed,
		event.NameCheckpoint, event.NameCompleted}, order, "lifecycle: %v", lifecycle)
	require.IsIncreasing(t, checkpoints)
	require.Equal(t, "max_turns", last.(*event.Completed).StopReason)

	require.Positive(t, dataTypes[event.TypeThinkingDelta])
	require.Equal(t, 3, dataTypes[event.TypeToolCallStart])
	require.Equal(t, 3, dataTypes[event.TypeToolCallEnd])
	require.GreaterOrEqual(t, dataTypes[event.TypeToolCallDelta], 5)
	require.Len(t, started, 3, "three tool calls")
	require.Len(t, finished, 3)
	require.Len(t, results, 3)
	for call := range started {
		require.True(t, results[call], "tool_result for %s", call)
	}

	// The tokens are the assistant's text: all of it, and turn by turn.
	var answers []string
	for _, m := range e.all(path+"/messages?pageSize=50", "messages") {
		if m["role"] != "assistant" {
			continue
		}
		var text strings.Builder
		for _, b := range m["content"].([]any) {
			if blk := b.(map[string]any); blk["type"] == "text" {
				text.WriteString(blk["text"].(string))
			}
		}
		answers = append(answers, text.String())
	}
	require.Equal(t, []string{"Let me search.", "Agentree continues as new.", "Counting.", "Three words; searching again."}, answers)
	require.Equal(t, strings.Join(answers, ""), tokens.String())
	require.Len(t, callOrder, len(answers))
	for i, call := range callOrder {
		require.Equal(t, answers[i], byCall[call].String(), "the tokens of model call %d", i+1)
	}
}
