package customagent

import (
	"context"
	"fmt"
	"io"

	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Reviewer decides on draft n (from 1): it returns SignalApprove or
// SignalReject and the decision to send with it.
type Reviewer func(n int, draft string) (signal string, d Decision)

// Editor is a scripted reviewer: it sends the first draft back with a
// note and approves the next.
func Editor(n int, _ string) (string, Decision) {
	if n == 1 {
		return SignalReject, Decision{By: "ana", Note: "Less hype, please: say what it does."}
	}
	return SignalApprove, Decision{By: "ana", Note: "Ship it."}
}

// Review is the human side of the loop: it follows the execution's
// stream through the REST API, asks review about each draft the agent
// waits on, and sends the decision as a signal, until the execution ends.
// It prints the stream and each decision to w.
func Review(ctx context.Context, api *apiclient.Client, executionID string, review Reviewer, w io.Writer) (*agentreev1.AgentExecution, error) {
	stream := sampleenv.NewStream(api, executionID, w)
	for n := 1; ; n++ {
		ex, err := stream.Follow(ctx, func(ev apiclient.Event) bool { return sampleenv.Ended(ev) || sampleenv.Waiting(ev) })
		if err != nil || ex.GetStatus() != "WAITING" {
			return ex, err
		}
		draft, err := leafText(ctx, api, executionID)
		if err != nil {
			return ex, err
		}
		signal, d := review(n, draft)
		fmt.Fprintf(w, "%s: %s.%s\n", d.By, signal, withNote(d.Note))
		if err := sampleenv.Signal(ctx, api, executionID, signal, d); err != nil {
			return ex, fmt.Errorf("customagent: send %s: %w", signal, err)
		}
	}
}

// leafText is the text of the entry the execution waits at: the draft.
func leafText(ctx context.Context, api *apiclient.Client, id string) (string, error) {
	msgs, err := sampleenv.Conversation(ctx, api, id)
	if err != nil || len(msgs) == 0 {
		return "", err
	}
	return sampleenv.Text(msgs[len(msgs)-1]), nil
}
