package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Converse starts a chat with the first message and sends each other one
// as a userMessage signal once the agent waits for it, streaming every
// reply to w. It returns the execution, still WAITING for the next message.
//
// It waits for a checkpoint later than the one before each signal, not
// just for WAITING: right after a signal the row still says WAITING until
// the workflow takes the message.
func Converse(ctx context.Context, ac *client.Client, store *entrystore.Store, orgID string, cfg agentsdk.Config, messages []string, w io.Writer) (entrystore.Execution, error) {
	if len(messages) == 0 {
		return entrystore.Execution{}, fmt.Errorf("chat: no messages")
	}
	fmt.Fprintf(w, "you: %s\n", messages[0])
	ex, err := ac.Start(ctx, client.StartRequest{OrgID: orgID, Kind: react.Kind, Config: cfg, UserPrompt: messages[0]})
	if err != nil {
		return ex, fmt.Errorf("chat: start: %w", err)
	}
	stream := sampleenv.NewStream(store, orgID, ex.ID, w)
	for i := 0; ; i++ {
		fmt.Fprint(w, "agent: ")
		ex, err = stream.Follow(ctx, sampleenv.WaitingAfter(ex.CheckpointSeq))
		if err != nil || i == len(messages)-1 {
			return ex, err
		}
		next := messages[i+1]
		fmt.Fprintf(w, "you: %s\n", next)
		value, _ := json.Marshal(agentsdk.UserMessage{Text: next})
		if _, err := ac.Signal(ctx, orgID, ex.ID, agentsdk.SignalUserMessage, value); err != nil {
			return ex, fmt.Errorf("chat: send message %d: %w", i+2, err)
		}
	}
}
