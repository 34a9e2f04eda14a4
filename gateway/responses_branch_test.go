package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/entrystore"
)

// ask is a response request continuing from previous ("" for none).
func ask(prompt, previous string) responses.ResponseNewParams {
	p := responses.ResponseNewParams{Model: responsesModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)}}
	if previous != "" {
		p.PreviousResponseID = openai.String(previous)
	}
	return p
}

// TestBranchFromAnOlderResponse: previous_response_id naming the last
// response continues its conversation; naming an older one branches (a
// fork at that response's last entry), so the model sees the history up
// to it and nothing of the turns after it, and both branches go on.
func TestBranchFromAnOlderResponse(t *testing.T) {
	srv := providertest.NewServer(t)
	e := newAnthropicEnv(t, srv)
	oa := e.openAIClient(e.keyA)
	ctx := context.Background()

	srv.Push(answer(10, 2, "Red."))
	r1, err := oa.Responses.New(ctx, ask("Pick a colour.", ""))
	require.NoError(t, err)
	srv.Push(answer(20, 2, "Circle."))
	r2, err := oa.Responses.New(ctx, ask("Pick a shape.", r1.ID))
	require.NoError(t, err)
	require.Equal(t, "Circle.", r2.OutputText())
	require.Equal(t, r1.ID, r2.PreviousResponseID)

	// A branch from r1: the model is asked with r1's turn, not r2's.
	srv.Push(answer(15, 3, "Seven."))
	r3, err := oa.Responses.New(ctx, ask("Pick a number.", r1.ID))
	require.NoError(t, err)
	require.Equal(t, "Seven.", r3.OutputText())
	require.Equal(t, r1.ID, r3.PreviousResponseID)
	requireUsage(t, r3, 15, 3)
	body := string(srv.Last().Body)
	require.Contains(t, body, "Pick a colour.")
	require.Contains(t, body, "Red.")
	require.Contains(t, body, "Pick a number.")
	require.NotContains(t, body, "Pick a shape.")
	require.NotContains(t, body, "Circle.")
	require.NotEqual(t, r2.ID, r3.ID)

	// Both branches continue, each from its own history.
	srv.Push(answer(30, 2, "Square."))
	r4, err := oa.Responses.New(ctx, ask("Another shape?", r2.ID))
	require.NoError(t, err)
	require.Equal(t, "Square.", r4.OutputText())
	require.Contains(t, string(srv.Last().Body), "Circle.")
	srv.Push(answer(25, 2, "Eight."))
	r5, err := oa.Responses.New(ctx, ask("Another number?", r3.ID))
	require.NoError(t, err)
	require.Equal(t, "Eight.", r5.OutputText())
	body = string(srv.Last().Body)
	require.Contains(t, body, "Seven.")
	require.NotContains(t, body, "Circle.")

	// Every response stays readable, with what it said.
	for id, want := range map[string]string{r1.ID: "Red.", r2.ID: "Circle.", r3.ID: "Seven.", r4.ID: "Square.", r5.ID: "Eight."} {
		got, err := oa.Responses.Get(ctx, id, responses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, want, got.OutputText())
		require.Equal(t, responses.ResponseStatusCompleted, got.Status)
	}
	// Another organization cannot branch from these.
	_, err = e.openAIClient(e.keyB).Responses.New(ctx, ask("Mine now?", r1.ID))
	requireAPIError(t, err, http.StatusNotFound, "")
}

// newAskEnv is newAnthropicEnv whose operator asks approval for every
// word_count call.
func newAskEnv(t *testing.T, srv *providertest.Server) *env {
	t.Helper()
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "test-key"})
	require.NoError(t, err)
	return newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools(),
		toolPolicy: agentsdk.Policies{demo.WordCountTool: agentsdk.PolicyAsk}})
}

// countingReplies are a model's answers that call word_count on three
// little words, then, given its result, say so.
func countingReplies() []providertest.Reply {
	return []providertest.Reply{
		reply(providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: 40}).
			Text("Counting.").
			ToolUse("toolu_1", demo.WordCountTool, `{"text": "three little words"}`).
			End("tool_use", 20)),
		answer(60, 4, "Three words."),
	}
}

// TestApprovalOverResponses: a worker tool the operator asks approval
// for surfaces as the spec's mcp_approval_request item; an
// mcp_approval_response approving it continues the turn, which runs the
// tool and answers.
func TestApprovalOverResponses(t *testing.T) {
	const model = responsesModel
	srv := providertest.NewServer(t, countingReplies()...)
	e := newAskEnv(t, srv)
	oa := e.openAIClient(e.keyA)
	ctx := context.Background()

	params := ask("How many words in 'three little words'?", "")
	params.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: demo.WordCountTool}}}
	r1, err := oa.Responses.New(ctx, params)
	require.NoError(t, err)
	require.Equal(t, responses.ResponseStatusCompleted, r1.Status)
	require.Len(t, r1.Output, 2, "%s", r1.RawJSON())
	require.Equal(t, "Counting.", r1.Output[0].AsMessage().Content[0].Text)
	req := r1.Output[1].AsMcpApprovalRequest()
	require.Equal(t, "mcp_approval_request", string(req.Type))
	require.Equal(t, demo.WordCountTool, req.Name)
	require.JSONEq(t, `{"text": "three little words"}`, req.Arguments)
	requireUsage(t, r1, 40, 20)

	// A message instead of a decision is refused, naming the input.
	_, err = oa.Responses.New(ctx, ask("Just answer.", r1.ID))
	requireAPIError(t, err, http.StatusBadRequest, "input")

	r2, err := oa.Responses.New(ctx, responses.ResponseNewParams{
		Model: model, PreviousResponseID: openai.String(r1.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{
			OfMcpApprovalResponse: &responses.ResponseInputItemMcpApprovalResponseParam{ApprovalRequestID: req.ID, Approve: true},
		}}},
	})
	require.NoError(t, err)
	require.Equal(t, responses.ResponseStatusCompleted, r2.Status)
	require.Equal(t, "Three words.", r2.OutputText())
	require.Equal(t, r1.ID, r2.PreviousResponseID)
	requireUsage(t, r2, 60, 4)
	// The tool ran once approved: the model read its result.
	require.Contains(t, string(srv.Last().Body), "tool_result")

	// r1 no longer waits: its call shows as a call made.
	got, err := oa.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{})
	require.NoError(t, err)
	require.Equal(t, "mcp_call", got.Output[1].Type)
}

// TestResponsesBadInput: every refusal is a 4xx in the spec's error shape
// ({"error": {message, type, param, code}}), naming the parameter at
// fault; none is a 500.
func TestResponsesBadInput(t *testing.T) {
	srv := providertest.NewServer(t)
	// The worker names its models, so another is unknown.
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "test-key", Models: []string{responsesModel}})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools()})
	oa := e.openAIClient(e.keyA)
	ctx := context.Background()

	_, err = oa.Responses.New(ctx, responses.ResponseNewParams{Model: "no-such-model",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	apiErr := requireAPIError(t, err, http.StatusBadRequest, "model")
	require.Equal(t, "model_not_found", apiErr.Code)
	require.Contains(t, apiErr.Message, responsesModel, "the refusal lists what is served")

	req := ask("Hi", "")
	req.Store = openai.Bool(false)
	_, err = oa.Responses.New(ctx, req)
	requireAPIError(t, err, http.StatusBadRequest, "store")

	req = ask("Hi", "")
	req.TopLogprobs = openai.Int(3)
	_, err = oa.Responses.New(ctx, req)
	requireAPIError(t, err, http.StatusBadRequest, "top_logprobs")

	req = ask("Hi", "")
	// A function the workers do not run is the client's: its name and
	// schema are checked.
	req.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get weather"}}}
	_, err = oa.Responses.New(ctx, req)
	requireAPIError(t, err, http.StatusBadRequest, "tools[0].name")
	req.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: map[string]any{"type": "string"}}}}
	_, err = oa.Responses.New(ctx, req)
	requireAPIError(t, err, http.StatusBadRequest, "tools[0].parameters")

	_, err = oa.Responses.New(ctx, ask("Hi", "resp_nonsense"))
	requireAPIError(t, err, http.StatusNotFound, "")
	_, err = oa.Responses.Get(ctx, "resp_nonsense", responses.ResponseGetParams{})
	requireAPIError(t, err, http.StatusNotFound, "")

	_, err = e.openAIClient("agt_not_a_key").Responses.New(ctx, ask("Hi", ""))
	requireAPIError(t, err, http.StatusUnauthorized, "")

	reader, _, err := e.es.MintAPIKey(ctx, e.orgA.ID, entrystore.NewAPIKey{Name: "reader", Roles: []string{entrystore.RoleRead}})
	require.NoError(t, err)
	_, err = e.openAIClient(reader).Responses.New(ctx, ask("Hi", ""))
	requireAPIError(t, err, http.StatusForbidden, "")

	// Bodies no SDK would send.
	for _, body := range []string{`not json`, `[]`, `{"model": 5, "input": "x"}`, `{"model": "` + responsesModel + `"}`,
		`{"model": "` + responsesModel + `", "input": [{"role": "assistant", "content": "x"}]}`} {
		hr, err := http.NewRequest(http.MethodPost, e.base+"/v1/responses", strings.NewReader(body))
		require.NoError(t, err)
		hr.Header.Set("Authorization", "Bearer "+e.keyA)
		resp, err := http.DefaultClient.Do(hr)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", body, raw)
		require.Contains(t, string(raw), `"type":"invalid_request_error"`, "%s: %s", body, raw)
	}
	require.Empty(t, srv.Requests(), "no refused request reached the model")
}
