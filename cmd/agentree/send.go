package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

func sendMessage(ctx context.Context, c *apiclient.Client, id, text string) error {
	v, err := structpb.NewValue(map[string]any{"text": text})
	if err != nil {
		return err
	}
	return c.Do(ctx, "POST", "/agent-executions/"+url.PathEscape(id)+"/signal",
		&agentreev1.SignalAgentExecutionRequest{SignalName: "userMessage", SignalValue: v}, nil)
}

func sendCmd() *cobra.Command {
	var f clientFlags
	var wait bool
	cmd := &cobra.Command{
		Use:   "send [flags] EXECUTION_ID MESSAGE",
		Short: "Send a follow-up message to a multi-turn execution",
		Long: `Send a follow-up message to a multi-turn execution. It is kept in the
execution's inbox and answered when the agent next takes input, so it may be
sent while the agent is still working. With --wait, send waits for the
answer and prints it.`,
		Example:           `  agentree send 0b6f…-… "and what about signals?" --wait`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			id := args[0]
			text := strings.Join(args[1:], " ")
			if err := sendMessage(cmd.Context(), c, id, text); err != nil {
				return fmt.Errorf("send: %w", err)
			}
			if wait {
				return waitForAnswer(cmd, c, f, id, text)
			}
			if f.json {
				fmt.Fprintf(cmd.OutOrStdout(), "{\"sent\":true,\"executionId\":%q}\n", id)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent; see the answer with: agentree show %s\n", id)
			return nil
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the answer and print it")
	return cmd
}

// waitForAnswer polls until the conversation holds the user's message
// followed by an assistant answer and the execution waits or has ended,
// then prints that answer.
func waitForAnswer(cmd *cobra.Command, c *apiclient.Client, f clientFlags, id, text string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ex := &agentreev1.AgentExecution{}
		if err := c.Do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		settled := ex.GetStatus() != "PENDING" && ex.GetStatus() != "RUNNING"
		if settled {
			msgs, err := c.Messages(ctx, id)
			if err != nil {
				return fmt.Errorf("send: %w", err)
			}
			if answer := answerTo(msgs, text); answer != nil || ex.GetStatus() != "WAITING" {
				if f.json {
					_, err := fmt.Fprintf(out, "{\"execution\":%s,\"answer\":%s}\n", compactJSON(ex), compactJSON(answer))
					return err
				}
				st := newStyle(out)
				if answer != nil {
					printMessage(out, st, answer)
				}
				fmt.Fprintln(out, statusText(st, ex))
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return interrupted(id)
		case <-tick.C:
		}
	}
}

// answerTo returns the last assistant message after the last user message
// whose text is text, or nil while there is none.
func answerTo(msgs []*agentreev1.Message, text string) *agentreev1.Message {
	asked := -1
	for i, m := range msgs {
		if m.GetRole() == "user" && messageText(m) == text {
			asked = i
		}
	}
	if asked < 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if len(msgs)-1 > asked && last.GetRole() == "assistant" {
		return last
	}
	return nil
}

func messageText(m *agentreev1.Message) string {
	var b strings.Builder
	for _, c := range m.GetContent() {
		if c.GetType() == "text" {
			b.WriteString(c.GetText())
		}
	}
	return b.String()
}
