package customagent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
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

// Review is the human side of the loop: it follows the execution, asks
// review about each draft the agent waits on, and sends the decision as a
// signal, until the execution ends. It prints the stream and each
// decision to w.
func Review(ctx context.Context, ac *client.Client, store *entrystore.Store, orgID, executionID string, review Reviewer, w io.Writer) (entrystore.Execution, error) {
	stream := sampleenv.NewStream(store, orgID, executionID, w)
	seq := 0
	for n := 1; ; n++ {
		waiting := sampleenv.WaitingAfter(seq)
		ex, err := stream.Follow(ctx, func(ex entrystore.Execution) bool { return ex.Status.Terminal() || waiting(ex) })
		if err != nil || ex.Status.Terminal() {
			return ex, err
		}
		seq = ex.CheckpointSeq
		draft, err := leafText(ctx, store, ex)
		if err != nil {
			return ex, err
		}
		signal, d := review(n, draft)
		fmt.Fprintf(w, "%s: %s.%s\n", d.By, signal, withNote(d.Note))
		value, err := json.Marshal(d)
		if err != nil {
			return ex, err
		}
		if _, err := ac.Signal(ctx, orgID, executionID, signal, value); err != nil {
			return ex, fmt.Errorf("customagent: send %s: %w", signal, err)
		}
	}
}

// leafText is the text of the entry the execution waits at: the draft.
func leafText(ctx context.Context, store *entrystore.Store, ex entrystore.Execution) (string, error) {
	msgs, err := sampleenv.ConversationOf(ctx, store, ex)
	if err != nil || len(msgs) == 0 {
		return "", err
	}
	return msgs[len(msgs)-1].Text(), nil
}
