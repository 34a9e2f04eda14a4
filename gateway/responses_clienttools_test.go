package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/entrystore"
)

// weatherTool is a client-side function tool: no worker runs get_weather.
func weatherTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name: "get_weather", Description: openai.String("The weather in a city, as the client knows it."),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}},
	}}
}

// weatherReplies are a model's answers that call get_weather for city,
// then, given its output, answer with text.
func weatherReplies(id, city, text string) []providertest.Reply {
	return []providertest.Reply{
		reply(providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: 40}).
			Text("Let me look.").
			ToolUse(id, "get_weather", `{"city": "`+city+`"}`).
			End("tool_use", 20)),
		answer(60, 4, text),
	}
}

// outputOf is the input that answers client tool call callID.
func outputOf(callID, output string) responses.ResponseNewParamsInputUnion {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item}}
}

// TestClientFunctionToolRoundTrip: a function tool no worker runs is the
// client's. Driven by the official OpenAI Go SDK, the response that asks
// for it ends with a function_call item; the client's
// function_call_output, sent with previous_response_id, continues the
// same turn in the same execution, and the model's next request holds the
// output. Streamed or not; an output for a call nobody waits for is a 400
// in the spec's shape.
func TestClientFunctionToolRoundTrip(t *testing.T) {
	srv := providertest.NewServer(t)
	e := newAnthropicEnv(t, srv)
	oa := e.openAIClient(e.keyA)
	ctx := context.Background()

	t.Run("non-streaming", func(t *testing.T) {
		srv.Push(weatherReplies("toolu_w1", "Paris", "It is sunny in Paris.")...)
		params := ask("What is the weather in Paris?", "")
		params.Tools = []responses.ToolUnionParam{weatherTool()}
		r1, err := oa.Responses.New(ctx, params)
		require.NoError(t, err)
		require.Equal(t, responses.ResponseStatusCompleted, r1.Status)
		require.Len(t, r1.Output, 2, "%s", r1.RawJSON())
		require.Equal(t, "Let me look.", r1.Output[0].AsMessage().Content[0].Text)
		fc := r1.Output[1].AsFunctionCall()
		require.Equal(t, "function_call", string(fc.Type))
		require.Equal(t, "get_weather", fc.Name)
		require.NotEmpty(t, fc.CallID)
		require.NotEmpty(t, fc.ID)
		require.JSONEq(t, `{"city": "Paris"}`, fc.Arguments)
		requireUsage(t, r1, 40, 20)
		// The model was offered the client's tool, schema and all.
		first := string(srv.Requests()[len(srv.Requests())-1].Body)
		require.Contains(t, first, `"get_weather"`)
		require.Contains(t, first, `"city"`)
		require.Len(t, r1.Tools, 1)
		require.Equal(t, "get_weather", r1.Tools[0].Name)

		// Outputs for a call nobody waits for, or a message instead, are
		// refused before anything is sent.
		asked := len(srv.Requests())
		_, err = oa.Responses.New(ctx, responses.ResponseNewParams{Model: responsesModel, PreviousResponseID: openai.String(r1.ID),
			Input: outputOf("call_nobody_made", "sunny")})
		requireAPIError(t, err, http.StatusBadRequest, "input[0].call_id")
		_, err = oa.Responses.New(ctx, ask("Never mind.", r1.ID))
		requireAPIError(t, err, http.StatusBadRequest, "input")
		require.Len(t, srv.Requests(), asked)

		r2, err := oa.Responses.New(ctx, responses.ResponseNewParams{Model: responsesModel, PreviousResponseID: openai.String(r1.ID),
			Input: outputOf(fc.CallID, "sunny, 24 degrees")})
		require.NoError(t, err)
		require.Equal(t, responses.ResponseStatusCompleted, r2.Status)
		require.Equal(t, "It is sunny in Paris.", r2.OutputText())
		require.Equal(t, r1.ID, r2.PreviousResponseID)
		require.NotEqual(t, r1.ID, r2.ID)
		requireUsage(t, r2, 60, 4)
		// The model's second request holds the client's output as the
		// call's result.
		last := string(srv.Last().Body)
		require.Contains(t, last, "sunny, 24 degrees")
		require.Contains(t, last, `"tool_result"`)
		require.Contains(t, last, fc.CallID)

		// One execution held the whole turn: the call's record has the
		// client's output.
		exs, _, err := e.es.ListExecutions(ctx, e.orgA.ID, entrystore.ExecutionFilter{}, entrystore.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, exs, 1)
		path := "/api/orgs/" + e.orgA.Slug + "/agent-executions/" + exs[0].ID
		rec := e.toolCall(path, fc.CallID)
		require.Equal(t, "completed", rec["status"], "%v", rec)

		// Through the native signal: the same output again changes
		// nothing; another output, or a call that is not the client's,
		// is refused.
		signal := func(id, output string) response {
			return e.do(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "toolResult",
				"signalValue": map[string]any{"toolCallId": id, "output": output}})
		}
		again := signal(fc.CallID, "sunny, 24 degrees")
		require.Equal(t, http.StatusOK, again.Status, "%s", again.Raw)
		require.Equal(t, again.Body["signalId"], signal(fc.CallID, "sunny, 24 degrees").Body["signalId"])
		require.Equal(t, http.StatusConflict, signal(fc.CallID, "rain").Status)
		require.Equal(t, http.StatusBadRequest, signal("call_nobody_made", "rain").Status)
		require.Len(t, srv.Requests(), asked+1, "no output sent again reached the model")

		got, err := oa.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, "function_call", got.Output[1].Type)
		require.Equal(t, fc.CallID, got.Output[1].AsFunctionCall().CallID)
	})

	t.Run("streaming", func(t *testing.T) {
		srv.Push(weatherReplies("toolu_w2", "Oslo", "Snow in Oslo.")...)
		params := ask("And in Oslo?", "")
		params.Tools = []responses.ToolUnionParam{weatherTool()}
		types, done := streamResponse(t, oa, params)
		require.Contains(t, types, "response.output_item.added")
		require.Contains(t, types, "response.function_call_arguments.done")
		r1 := done.Response
		require.Equal(t, responses.ResponseStatusCompleted, r1.Status)
		fc := r1.Output[len(r1.Output)-1].AsFunctionCall()
		require.Equal(t, "get_weather", fc.Name)
		require.JSONEq(t, `{"city": "Oslo"}`, fc.Arguments)
		requireUsage(t, &r1, 40, 20)

		_, done = streamResponse(t, oa, responses.ResponseNewParams{Model: responsesModel, PreviousResponseID: openai.String(r1.ID),
			Input: outputOf(fc.CallID, "minus five, snowing")})
		r2 := done.Response
		require.Equal(t, responses.ResponseStatusCompleted, r2.Status)
		require.Equal(t, "Snow in Oslo.", r2.OutputText())
		require.Equal(t, r1.ID, r2.PreviousResponseID)
		requireUsage(t, &r2, 60, 4)
		require.Contains(t, string(srv.Last().Body), "minus five, snowing")
	})

	t.Run("in a conversation", func(t *testing.T) {
		srv.Push(weatherReplies("toolu_w3", "Rome", "Warm in Rome.")...)
		conv, err := oa.Conversations.New(ctx, conversations.ConversationNewParams{})
		require.NoError(t, err)
		params := ask("Rome?", "")
		params.Conversation = responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}
		params.Tools = []responses.ToolUnionParam{weatherTool()}
		r1, err := oa.Responses.New(ctx, params)
		require.NoError(t, err)
		fc := r1.Output[len(r1.Output)-1].AsFunctionCall()
		require.Equal(t, "get_weather", fc.Name)

		r2, err := oa.Responses.New(ctx, responses.ResponseNewParams{Model: responsesModel,
			Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
			Input:        outputOf(fc.CallID, "warm and dry")})
		require.NoError(t, err)
		require.Equal(t, "Warm in Rome.", r2.OutputText())
		require.Equal(t, r1.ID, r2.PreviousResponseID)

		items, err := oa.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc})
		require.NoError(t, err)
		var kinds []string
		for _, it := range items.Data {
			kinds = append(kinds, it.Type)
			if it.Type == "function_call_output" {
				require.Equal(t, fc.CallID, it.CallID)
				require.Equal(t, "warm and dry", it.Output.OfString)
			}
		}
		require.Equal(t, []string{"message", "message", "function_call", "function_call_output", "message"}, kinds)
	})
}

// TestClientToolsConfigRefused: over the native API, client tools are
// checked at create: a name a live worker's tool has, or a schema that
// is not an object schema, is a 400 naming the field.
func TestClientToolsConfigRefused(t *testing.T) {
	srv := providertest.NewServer(t)
	e := newAnthropicEnv(t, srv)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	create := func(tool map[string]any) response {
		return e.do(e.keyA, http.MethodPost, base, map[string]any{
			"userPrompt": "Hi", "models": []map[string]any{{"provider": "anthropic", "modelId": responsesModel}},
			"config": map[string]any{"clientTools": []map[string]any{tool}},
		})
	}
	r := create(map[string]any{"name": demo.WordCountTool, "parameters": map[string]any{"type": "object"}})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
	require.Contains(t, r.Body["message"], "clientTools[0].name")
	r = create(map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "array"}})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
	require.Contains(t, r.Body["message"], "clientTools[0].parameters must be an object schema")
	require.Empty(t, srv.Requests(), "no refused execution reached the model")
}

// streamResponse streams a response with the SDK and returns its event
// types and its response.completed event.
func streamResponse(t *testing.T, oa *openai.Client, params responses.ResponseNewParams) ([]string, responses.ResponseCompletedEvent) {
	t.Helper()
	stream := oa.Responses.NewStreaming(context.Background(), params)
	defer stream.Close()
	var types []string
	var done responses.ResponseCompletedEvent
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.completed" {
			done = ev.AsResponseCompleted()
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, "response.completed", types[len(types)-1], "%v", types)
	raw, _ := json.Marshal(done.Response.Output)
	require.NotEmpty(t, done.Response.ID, "%s", raw)
	return types, done
}
