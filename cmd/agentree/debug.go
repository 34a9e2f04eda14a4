package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// showContext prints what the model saw at an entry (time travel).
func showContext(cmd *cobra.Command, f clientFlags, id, entry string) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	// The messages come a page at a time; every page repeats the rest.
	mc := &agentreev1.ModelContext{}
	for cursor := ""; ; {
		page := &agentreev1.ModelContext{}
		path := "/agent-executions/" + url.PathEscape(id) + "/entries/" + url.PathEscape(entry) + "/context?cursor=" + url.QueryEscape(cursor)
		if err := c.Do(cmd.Context(), "GET", path, nil, page); err != nil {
			return fmt.Errorf("show --context: %w", err)
		}
		page.Messages = append(mc.GetMessages(), page.GetMessages()...)
		if mc, cursor = page, page.GetNextCursor(); cursor == "" {
			break
		}
	}
	w := cmd.OutOrStdout()
	if f.json {
		_, err := fmt.Fprintf(w, "%s\n", compactJSON(mc))
		return err
	}
	st := newStyle(w)
	what := "what a model call at this entry would send"
	if mc.GetSent() {
		what = "the request this model call sent"
	}
	fmt.Fprintf(w, "%s\n%s %s\n", st.dim(what), st.bold("model"), clean(mc.GetModel().GetProvider()+"/"+mc.GetModel().GetModelId()))
	if mc.GetSystem() != "" {
		fmt.Fprintf(w, "%s %s\n", st.bold("system"), clean(mc.GetSystem()))
	}
	var tools []string
	for _, t := range mc.GetTools() {
		tools = append(tools, t.GetName())
	}
	fmt.Fprintf(w, "%s %s\n", st.bold("tools"), clean(strings.Join(tools, ", ")))
	for _, m := range mc.GetMessages() {
		b, _ := m.MarshalJSON()
		var msg struct {
			Role    string `json:"role"`
			Content []struct {
				Text     string          `json:"text"`
				ToolCall json.RawMessage `json:"toolCall"`
			} `json:"content"`
		}
		_ = json.Unmarshal(b, &msg)
		var parts []string
		for _, c := range msg.Content {
			if c.Text != "" {
				parts = append(parts, c.Text)
			} else if len(c.ToolCall) > 0 {
				parts = append(parts, "tool call "+string(c.ToolCall))
			}
		}
		fmt.Fprintf(w, "%s %s\n", st.bold(msg.Role+":"), clean(strings.Join(parts, " ")))
	}
	return nil
}

// forkCmd forks an execution at an entry and follows the fork.
func forkCmd() *cobra.Command {
	var f clientFlags
	var at string
	var detach bool
	cmd := &cobra.Command{
		Use:   "fork [flags] EXECUTION_ID --at ENTRY_ID PROMPT",
		Short: "Start a new execution from an entry of another, with a new prompt",
		Long: `Start a new execution that shares an execution's conversation up to an entry
(by reference: nothing is copied) and goes on with PROMPT; the original is
untouched. Entry IDs: agentree show ID --json, or GET …/entries.`,
		Example:           `  agentree fork 0b6f…-… --at 7c1d…-… "what if we used Postgres instead?"`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if at == "" {
				return fmt.Errorf("fork: --at ENTRY_ID is required")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			ex := &agentreev1.AgentExecution{}
			req := &agentreev1.ForkAgentExecutionRequest{EntryId: at, UserPrompt: strings.Join(args[1:], " ")}
			if err := c.Do(cmd.Context(), "POST", "/agent-executions/"+url.PathEscape(args[0])+"/fork", req, ex); err != nil {
				return fmt.Errorf("fork: %w", err)
			}
			if detach || f.json {
				return printResult(cmd.OutOrStdout(), f, ex, ex.GetId())
			}
			out := cmd.OutOrStdout()
			st := newStyle(out)
			fmt.Fprintln(out, st.dim("execution "+ex.GetId()+" forks "+args[0]+" at "+at))
			return follow(cmd.Context(), c, f, out, st, ex.GetId(), false)
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().StringVar(&at, "at", "", "the entry to fork at")
	cmd.Flags().BoolVar(&detach, "detach", false, "print the fork's ID; do not follow")
	return cmd
}

// timelineCmd prints an execution's token timeline.
func timelineCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:               "timeline [flags] EXECUTION_ID",
		Short:             "Show how an execution's context grew, entry by entry, against the model's window",
		Args:              exactlyOneID("timeline"),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			tl := &agentreev1.TokenTimeline{}
			for cursor := ""; ; {
				page := &agentreev1.TokenTimeline{}
				path := "/agent-executions/" + url.PathEscape(args[0]) + "/token-timeline?pageSize=500&cursor=" + url.QueryEscape(cursor)
				if err := c.Do(cmd.Context(), "GET", path, nil, page); err != nil {
					return fmt.Errorf("timeline: %w", err)
				}
				page.Points = append(tl.GetPoints(), page.GetPoints()...)
				if tl, cursor = page, page.GetNextCursor(); cursor == "" {
					break
				}
			}
			if f.json {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s\n", compactJSON(tl))
				return err
			}
			printTimeline(cmd.OutOrStdout(), tl)
			return nil
		},
	}
	addClientFlags(cmd, &f)
	return cmd
}

// printTimeline prints a point per line with a bar of its share of the
// window; "~" marks an estimate.
func printTimeline(w io.Writer, tl *agentreev1.TokenTimeline) {
	fmt.Fprintf(w, "window %d tokens\n", tl.GetLimit())
	for _, p := range tl.GetPoints() {
		kind := p.GetType()
		if p.GetRole() != "" {
			kind = p.GetRole()
		}
		mark := " "
		if p.GetEstimated() {
			mark = "~"
		}
		bar := strings.Repeat("█", min(40, int(p.GetRatio()*40+0.5)))
		fmt.Fprintf(w, "%-12s %+8d %s%8d %5.1f%% %s\n", kind, p.GetTokensAdded(), mark, p.GetContextTokens(), 100*p.GetRatio(), bar)
	}
}
