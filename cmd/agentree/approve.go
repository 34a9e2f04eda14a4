package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// decide sends a decision on a tool call waiting for approval.
func decide(ctx context.Context, c *apiclient.Client, id, call, decision, reason string, always bool) (*agentreev1.DecideToolCallResponse, error) {
	var out agentreev1.DecideToolCallResponse
	err := c.Do(ctx, "POST", "/agent-executions/"+url.PathEscape(id)+"/tool-calls/"+url.PathEscape(call)+"/approval",
		&agentreev1.DecideToolCallRequest{Decision: decision, Reason: reason, Always: always}, &out)
	return &out, err
}

// decisionCmd is approve or reject.
func decisionCmd(decision string) *cobra.Command {
	var f clientFlags
	var reason string
	var always bool
	verb := map[string]string{agentsdk.DecisionApprove: "Approve", agentsdk.DecisionReject: "Reject"}[decision]
	cmd := &cobra.Command{
		Use:   decision + " [flags] EXECUTION_ID TOOL_CALL_ID",
		Short: verb + " a tool call waiting for approval",
		Long: verb + ` a tool call waiting for approval: an execution whose tool policy says
"ask" for the tool waits, status WAITING with reason "approval", until a
person decides. TOOL_CALL_ID is the call's ID as agentree show and the
agent.waiting event list it. A rejected call never runs; the model reads the
reason and adapts.`,
		Example: map[string]string{
			agentsdk.DecisionApprove: "  agentree approve 0b6f…-… toolu_01A… --always",
			agentsdk.DecisionReject:  `  agentree reject 0b6f…-… toolu_01A… --reason "not on main"`,
		}[decision],
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			res, err := decide(cmd.Context(), c, args[0], args[1], decision, reason, always)
			if err != nil {
				return fmt.Errorf("%s: %w", decision, err)
			}
			if f.json {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", compactJSON(res))
				return nil
			}
			done := map[string]string{agentsdk.DecisionApprove: "approved", agentsdk.DecisionReject: "rejected"}[decision]
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s); follow with: agentree show %s\n",
				done, args[1], clean(res.GetToolCall().GetToolName()), args[0])
			return nil
		},
	}
	addClientFlags(cmd, &f)
	if decision == agentsdk.DecisionApprove {
		cmd.Flags().BoolVar(&always, "always", false, "approve this tool for the rest of the execution")
	} else {
		cmd.Flags().StringVar(&reason, "reason", "", "why; the model reads it")
	}
	return cmd
}

// showPending prints the calls an execution waits to have decided.
func showPending(w io.Writer, st style, calls []event.PendingToolCall) {
	for _, pc := range calls {
		risk := ""
		if pc.Risk != "" {
			risk = " risk " + pc.Risk
		}
		fmt.Fprintf(w, "%s %s %s%s %s\n", st.bold("?"), st.bold(pc.ToolName), st.dim(string(pc.Arguments)), st.dim(risk), st.dim(pc.ToolCallID))
	}
	fmt.Fprintln(w, st.dim("waiting for approval"))
}

// askDecisions asks on the terminal about each pending call and sends the
// answers: y approves, a approves for the rest of the execution, anything
// else rejects (with an optional reason). It reports false when input
// ended before every call was decided.
func askDecisions(ctx context.Context, c *apiclient.Client, w io.Writer, st style, id string, calls []event.PendingToolCall) (bool, error) {
	read := func(prompt string) (string, bool) {
		fmt.Fprint(w, prompt)
		select {
		case <-ctx.Done():
			return "", false
		case line, ok := <-stdinLines():
			return strings.TrimSpace(line), ok
		}
	}
	for _, pc := range calls {
		answer, ok := read(st.bold(fmt.Sprintf("run %s? [y]es, [n]o, [a]lways: ", pc.ToolName)))
		if !ok {
			fmt.Fprintf(w, "\nexecution %[1]s waits for approval:\n  agentree approve %[1]s %[2]s\n  agentree reject %[1]s %[2]s --reason \"...\"\n", id, pc.ToolCallID)
			return false, nil
		}
		decision, reason, always := agentsdk.DecisionApprove, "", false
		switch strings.ToLower(answer) {
		case "y", "yes":
		case "a", "always":
			always = true
		default:
			decision = agentsdk.DecisionReject
			if reason, ok = read("reason (optional): "); !ok {
				reason = ""
			}
		}
		if _, err := decide(ctx, c, id, pc.ToolCallID, decision, reason, always); err != nil {
			// Decided elsewhere meanwhile (a 409) is no failure here: the
			// stream shows what happens next.
			if apiclient.StatusOf(err) == http.StatusConflict {
				fmt.Fprintln(w, st.dim(err.Error()))
				continue
			}
			return false, err
		}
	}
	return true, nil
}
