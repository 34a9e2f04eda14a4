package openaiclient

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TaskQueue is the sample's task queue.
const TaskQueue = "agentree-openai-client"

// Model is what the program asks for: the scripted model the sample's
// worker serves, named as /v1/responses names a model ("provider/id").
const Model = scripted.Name + "/scripted-1"

// Question is what the program asks.
const Question = "Why does a durable agent need a checkpoint per turn?"

// Answer is what the scripted model answers.
const Answer = "Because a checkpoint per turn means a crash costs at most the turn in flight: " +
	"another worker resumes from the last one, and the answer still arrives whole."

// tokenDelay paces the scripted answer's tokens, as a real model's
// arrive (and so a worker can be killed mid-answer).
const tokenDelay = 20 * time.Millisecond

// Script is the worker's model: it answers every question with Answer.
func Script() scripted.Script {
	return func(int, agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: Answer, TokenDelay: tokenDelay, Usage: agentsdk.Usage{Input: 24, Output: 30}}
	}
}

// Result is what Stream saw.
type Result struct {
	// ID is the response's ID (a turn of an Agentree execution).
	ID string
	// Text is the completed response's text.
	Text string
	// Deltas is how many response.output_text.delta events arrived.
	Deltas int
}

// Stream asks question of the OpenAI-compatible API at baseURL (an
// Agentree gateway's …/v1) with an Agentree API key, printing the answer
// on w as it streams, and returns the completed response. These are the
// lines any openai-go program has; only the base URL and key name
// Agentree. onDelta, when set, is told of each delta (the test kills a
// worker there).
func Stream(ctx context.Context, baseURL, key, question string, w io.Writer, onDelta func(string)) (Result, error) {
	client := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key))
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: Model,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(question)},
	})
	var res Result
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			res.Deltas++
			fmt.Fprint(w, ev.Delta)
			if onDelta != nil {
				onDelta(ev.Delta)
			}
		case "response.completed":
			res.ID, res.Text = ev.Response.ID, ev.Response.OutputText()
			fmt.Fprintln(w)
		}
	}
	if err := stream.Err(); err != nil {
		return res, fmt.Errorf("openaiclient: stream a response: %w", err)
	}
	if res.ID == "" {
		return res, fmt.Errorf("openaiclient: the stream ended without response.completed")
	}
	return res, nil
}
