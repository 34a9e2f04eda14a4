package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
)

// responsesModel is the model the fake Anthropic server answers as.
const responsesModel = "claude-sonnet-4-5"

// answer is one model reply of text deltas, with usage.
func answer(input, output int64, deltas ...string) providertest.Reply {
	return reply(providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: input}).
		Text(deltas...).End("end_turn", output))
}

// openAIClient is the official OpenAI SDK pointed at the gateway's /v1
// with key; no retries, so every answer is the gateway's first.
func (e *env) openAIClient(key string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(e.base+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	return &c
}

// responseText is the text of a response's message items.
func responseText(r *responses.Response) string { return r.OutputText() }

// requireUsage checks a response's usage in the spec's fields.
func requireUsage(t *testing.T, r *responses.Response, input, output int64) {
	t.Helper()
	require.Equal(t, input, r.Usage.InputTokens, "input tokens")
	require.Equal(t, output, r.Usage.OutputTokens, "output tokens")
	require.Equal(t, input+output, r.Usage.TotalTokens, "total tokens")
}

// TestResponsesWithOpenAIGoSDK drives /v1/responses and /v1/conversations
// with the official OpenAI Go SDK against a real gateway and worker whose
// model is a fake Anthropic server: each case checks the answer's text,
// the IDs that tie responses together, and usage.
func TestResponsesWithOpenAIGoSDK(t *testing.T) {
	srv := providertest.NewServer(t)
	e := newAnthropicEnv(t, srv)
	oa := e.openAIClient(e.keyA)
	ctx := context.Background()

	t.Run("non-streaming", func(t *testing.T) {
		srv.Push(answer(21, 5, "Durable ", "answers."))
		r, err := oa.Responses.New(ctx, responses.ResponseNewParams{
			Model: responsesModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say something durable.")},
			Instructions: openai.String("Be brief."),
		})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(r.ID, "resp_"), r.ID)
		require.Equal(t, responses.ResponseStatusCompleted, r.Status)
		require.Equal(t, "Durable answers.", responseText(r))
		require.Equal(t, responsesModel, string(r.Model))
		require.Equal(t, "Be brief.", r.Instructions.OfString)
		requireUsage(t, r, 21, 5)
		require.Contains(t, string(srv.Last().Body), "Say something durable.")
		require.Contains(t, string(srv.Last().Body), "Be brief.")

		got, err := oa.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, r.ID, got.ID)
		require.Equal(t, "Durable answers.", responseText(got))
		requireUsage(t, got, 21, 5)

		// Another organization's key finds nothing behind the ID.
		_, err = e.openAIClient(e.keyB).Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
		requireAPIError(t, err, 404, "")
	})

	t.Run("streaming", func(t *testing.T) {
		srv.Push(answer(30, 7, "Streamed ", "token ", "by token."))
		stream := oa.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: responsesModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Stream it.")},
		})
		var (
			types    []string
			deltas   strings.Builder
			seq      []int64
			final    responses.Response
			itemID   string
			doneText string
		)
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			seq = append(seq, ev.SequenceNumber)
			switch ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.Delta)
				if itemID == "" {
					itemID = ev.ItemID
				}
				require.Equal(t, itemID, ev.ItemID)
			case "response.output_text.done":
				doneText = ev.Text
			case "response.completed":
				final = ev.Response
			}
		}
		require.NoError(t, stream.Err())
		require.Equal(t, "Streamed token by token.", deltas.String())
		require.Equal(t, deltas.String(), doneText)
		for i := range seq {
			require.Equal(t, int64(i), seq[i], "sequence numbers count from 0 without gaps")
		}
		require.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}, types[:4])
		require.Equal(t, []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}, types[len(types)-4:])
		require.Equal(t, responses.ResponseStatusCompleted, final.Status)
		require.Equal(t, "Streamed token by token.", final.OutputText())
		require.Equal(t, itemID, final.Output[0].ID, "the streamed item is the kept one")
		requireUsage(t, &final, 30, 7)

		got, err := oa.Responses.Get(ctx, final.ID, responses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, "Streamed token by token.", responseText(got))
	})

	t.Run("background and poll", func(t *testing.T) {
		srv.Push(answer(12, 3, "In the ", "background."))
		r, err := oa.Responses.New(ctx, responses.ResponseNewParams{
			Model: responsesModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Take your time.")},
			Background: openai.Bool(true),
		})
		require.NoError(t, err)
		require.True(t, r.Background)
		require.Contains(t, []responses.ResponseStatus{responses.ResponseStatusQueued, responses.ResponseStatusInProgress,
			responses.ResponseStatusCompleted}, r.Status)
		var got *responses.Response
		poll(t, 30*time.Second, func() bool {
			got, err = oa.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
			require.NoError(t, err)
			return got.Status == responses.ResponseStatusCompleted
		}, "the background response never completed")
		require.Equal(t, r.ID, got.ID)
		require.Equal(t, "In the background.", responseText(got))
		requireUsage(t, got, 12, 3)

		// Cancelling a response that has ended is refused.
		_, err = oa.Responses.Cancel(ctx, r.ID)
		requireAPIError(t, err, 409, "")
	})

	t.Run("conversation over three turns", func(t *testing.T) {
		conv, err := oa.Conversations.New(ctx, conversations.ConversationNewParams{})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(conv.ID, "conv_"), conv.ID)
		got, err := oa.Conversations.Get(ctx, conv.ID)
		require.NoError(t, err)
		require.Equal(t, conv.ID, got.ID)
		_, err = e.openAIClient(e.keyB).Conversations.Get(ctx, conv.ID)
		requireAPIError(t, err, 404, "")

		var ids []string
		for i, turn := range []struct {
			prompt, answer string
			in, out        int64
		}{
			{"First?", "One.", 10, 2}, {"Second?", "Two.", 20, 3}, {"Third?", "Three.", 30, 4},
		} {
			srv.Push(answer(turn.in, turn.out, turn.answer))
			r, err := oa.Responses.New(ctx, responses.ResponseNewParams{
				Model: responsesModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(turn.prompt)},
				Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
			})
			require.NoError(t, err, "turn %d", i+1)
			require.Equal(t, turn.answer, responseText(r), "turn %d", i+1)
			require.Equal(t, conv.ID, r.Conversation.ID)
			requireUsage(t, r, turn.in, turn.out)
			require.NotContains(t, ids, r.ID)
			if i > 0 {
				require.Equal(t, ids[i-1], r.PreviousResponseID, "turn %d follows the one before", i+1)
				// The model saw the earlier turns: the tree is the history.
				body := string(srv.Last().Body)
				require.Contains(t, body, "First?")
				require.Contains(t, body, "One.")
			}
			ids = append(ids, r.ID)
		}
		items, err := oa.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc})
		require.NoError(t, err)
		var texts []string
		seen := map[string]bool{}
		for _, it := range items.Data {
			require.False(t, seen[it.ID], "item IDs are unique: %s", it.ID)
			seen[it.ID] = true
			for _, c := range it.Content.OfMessageContentArray {
				texts = append(texts, it.Role+": "+c.Text)
			}
		}
		require.Equal(t, []string{"user: First?", "assistant: One.", "user: Second?", "assistant: Two.", "user: Third?", "assistant: Three."}, texts)
		page, err := oa.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Limit: openai.Int(2)})
		require.NoError(t, err)
		require.Len(t, page.Data, 2)
		require.True(t, page.HasMore)
		require.Equal(t, "assistant", page.Data[0].Role, "newest first by default")
	})
}

// requireAPIError checks an SDK error's status and, when given, the
// spec's error param.
func requireAPIError(t *testing.T, err error, status int, param string) *openai.Error {
	t.Helper()
	require.Error(t, err)
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, status, apiErr.StatusCode, "%s", apiErr.RawJSON())
	require.NotEmpty(t, apiErr.Message)
	require.NotEmpty(t, apiErr.Type)
	if param != "" {
		require.Equal(t, param, apiErr.Param, "%s", apiErr.RawJSON())
	}
	return apiErr
}
