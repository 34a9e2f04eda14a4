package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

func listCmd() *cobra.Command {
	var f clientFlags
	var status, kind string
	var limit int
	cmd := &cobra.Command{
		Use:   "ls [flags]",
		Short: "List executions, newest first",
		Long: `List executions, newest first.

STEPS counts model turns plus tool calls: each answer the model gave (with
or without tool calls) is one step and each tool call another, so a chat of
three answered turns shows 3 and a turn that called two tools shows 3. It
is read from each execution's conversation.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd, f, status, kind, limit)
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().StringVar(&status, "status", "", "only this status (running, waiting, completed, failed, cancelled, ...)")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(
		[]string{"pending", "running", "waiting", "cancelling", "completed", "failed", "cancelled"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func listExecutions(ctx context.Context, c *apiclient.Client, status, kind string, limit int) ([]*agentreev1.AgentExecution, error) {
	q := url.Values{}
	q.Set("pageSize", fmt.Sprint(limit))
	if status != "" {
		q.Set("status", strings.ToUpper(status))
	}
	if kind != "" {
		q.Set("kind", kind)
	}
	page := &agentreev1.ListAgentExecutionsResponse{}
	if err := c.Do(ctx, "GET", "/agent-executions?"+q.Encode(), nil, page); err != nil {
		return nil, err
	}
	return page.GetAgentExecutions(), nil
}

// runList lists executions, newest first.
func runList(cmd *cobra.Command, f clientFlags, status, kind string, limit int) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	c, err := f.client()
	if err != nil {
		return err
	}
	exs, err := listExecutions(ctx, c, status, kind, limit)
	if err != nil {
		return fmt.Errorf("ls: %w", err)
	}
	if f.json {
		all := make([]json.RawMessage, len(exs))
		for i, e := range exs {
			all[i] = compactJSON(e)
		}
		return json.NewEncoder(out).Encode(all)
	}
	// STEPS is the execution's own stepCount: a step is a model call and
	// the tool calls it asks for, counted on across resumes.
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSTEPS\tCREATED")
	for _, e := range exs {
		fmt.Fprint(tw, clean(fmt.Sprintf("%s\t%s\t%s\t%d\t%s\n", e.GetId(), e.GetKind(), e.GetStatus(), e.GetStepCount(),
			e.GetCreatedAt().AsTime().Local().Format("2006-01-02 15:04:05"))))
	}
	return tw.Flush()
}

func showCmd() *cobra.Command {
	var f clientFlags
	var wait bool
	var contextAt string
	cmd := &cobra.Command{
		Use:               "show [flags] EXECUTION_ID",
		Short:             "Show an execution and its conversation",
		Long:              "Show an execution and its conversation; with --wait, once it waits for input or has ended.",
		Example:           "  agentree show 0b6f…-…\n  agentree show 0b6f…-… --json | jq .execution.status\n  agentree show 0b6f…-… --context 7c1d…-…   # what the model saw there",
		Args:              exactlyOneID("show"),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if contextAt != "" {
				return showContext(cmd, f, args[0], contextAt)
			}
			if wait {
				if err := waitSettled(cmd.Context(), f, args[0]); err != nil {
					return fmt.Errorf("show: %w", err)
				}
			}
			return runShow(cmd, f, args[0])
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().BoolVar(&wait, "wait", false, "first wait until it waits for input or has ended")
	cmd.Flags().StringVar(&contextAt, "context", "", "show what the model saw at this entry (time travel) instead")
	return cmd
}

// waitSettled polls until the execution is neither starting nor running.
func waitSettled(ctx context.Context, f clientFlags, id string) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ex := &agentreev1.AgentExecution{}
		if err := c.Do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
			return err
		}
		switch ex.GetStatus() {
		case "PENDING", "RUNNING", "CANCELLING":
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return interrupted(id)
		case <-tick.C:
		}
	}
}

// exactlyOneID says what is missing in the command's terms.
func exactlyOneID(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: give one execution ID (agentree ls lists them), got %d arguments", name, len(args))
		}
		return nil
	}
}

// runShow prints an execution and its conversation.
func runShow(cmd *cobra.Command, f clientFlags, id string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	c, err := f.client()
	if err != nil {
		return err
	}
	ex := &agentreev1.AgentExecution{}
	if err := c.Do(ctx, "GET", "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
		return fmt.Errorf("show: %w", err)
	}
	msgs, err := c.Messages(ctx, id)
	if err != nil {
		return fmt.Errorf("show: %w", err)
	}
	if f.json {
		all := make([]json.RawMessage, len(msgs))
		for i, m := range msgs {
			all[i] = compactJSON(m)
		}
		return json.NewEncoder(out).Encode(map[string]any{"execution": compactJSON(ex), "messages": all})
	}
	st := newStyle(out)
	fmt.Fprintf(out, "%s %s %s\n\n", st.bold(ex.GetId()), clean(ex.GetKind()), statusText(st, ex))
	for _, m := range msgs {
		printMessage(out, st, m)
	}
	return nil
}

func statusText(st style, ex *agentreev1.AgentExecution) string {
	s := ex.GetStatus()
	if ex.GetStopReason() != "" {
		s += " (" + ex.GetStopReason() + ")"
	}
	if ex.GetError() != "" {
		s += ": " + ex.GetError()
	}
	switch ex.GetStatus() {
	case "COMPLETED":
		return st.green(s)
	case "FAILED", "CANCELLED":
		return st.red(s)
	}
	return clean(s)
}

func printMessage(w io.Writer, st style, m *agentreev1.Message) {
	label := map[string]string{"user": "you", "assistant": "agent", "system": "system", "tool_result": "tool " + m.GetToolName()}[m.GetRole()]
	fmt.Fprintln(w, st.bold(label+":"))
	for _, b := range m.GetContent() {
		switch b.GetType() {
		case "text":
			text := b.GetText()
			if m.GetRole() == "tool_result" && len(text) > 400 {
				text = text[:400] + "…"
			}
			fmt.Fprintln(w, clean(text))
		case "thinking":
			fmt.Fprintln(w, st.dim(b.GetThinking()))
		case "tool_call":
			if tc := b.GetToolCall(); tc != nil {
				args, _ := json.Marshal(tc.GetArguments().AsInterface())
				fmt.Fprintf(w, "%s %s %s\n", st.cyan("→"), clean(tc.GetName()), st.dim(string(args)))
			}
		}
	}
	fmt.Fprintln(w)
}
