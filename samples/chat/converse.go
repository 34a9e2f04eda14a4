package chat

import (
	"context"
	"fmt"
	"io"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Converse starts a chat with the first message and sends each other one
// as a userMessage signal once the agent waits for it, streaming every
// reply to w. It returns the execution, still WAITING for the next message.
//
// The stream is followed from where the last reply ended (Last-Event-ID),
// so the agent.waiting that ends each reply is a new one: the wait after
// the message just sent, not the one before it.
func Converse(ctx context.Context, api *apiclient.Client, cfg agentsdk.Config, messages []string, w io.Writer) (*agentreev1.AgentExecution, error) {
	if len(messages) == 0 {
		return nil, fmt.Errorf("chat: no messages")
	}
	fmt.Fprintf(w, "you: %s\n", messages[0])
	ex, err := sampleenv.Create(ctx, api, react.Kind, cfg, messages[0])
	if err != nil {
		return ex, fmt.Errorf("chat: start: %w", err)
	}
	stream := sampleenv.NewStream(api, ex.GetId(), w)
	for i := 0; ; i++ {
		fmt.Fprint(w, "agent: ")
		ex, err = stream.Follow(ctx, sampleenv.Waiting)
		if err != nil || i == len(messages)-1 {
			return ex, err
		}
		next := messages[i+1]
		fmt.Fprintf(w, "you: %s\n", next)
		if err := sampleenv.Signal(ctx, api, ex.GetId(), agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: next}); err != nil {
			return ex, fmt.Errorf("chat: send message %d: %w", i+2, err)
		}
	}
}
