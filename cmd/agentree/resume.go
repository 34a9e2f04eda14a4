package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// resumeCmd continues a PAUSED execution as a new one and follows it.
func resumeCmd() *cobra.Command {
	var f clientFlags
	var maxSteps int
	var maxTokens int64
	var maxCost float64
	var detach bool
	cmd := &cobra.Command{
		Use:   "resume [flags] EXECUTION_ID [MESSAGE]",
		Short: "Continue a paused execution (one that spent its step budget, its budget or its organization's daily budget)",
		Long: `Continue a PAUSED execution — one that spent its step budget (config.maxSteps),
its config.budget (stop reason budget; raise the cap with --max-tokens or
--max-cost-usd), or whose organization spent its daily token or cost quota
(resumable once the quota allows, see agentree quota) — as a new execution that carries on the same conversation from where it
paused, with a fresh budget, and follow it. MESSAGE is its next user message
(default: continue from where you left off). Only a paused execution can be
resumed, once; a run's steps across its resumes are capped at 500.`,
		Example:           `  agentree resume 0b6f…-… --max-steps 20 "and summarise at the end"`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeExecutionIDs(&f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			req := &agentreev1.ResumeAgentExecutionRequest{MaxSteps: int32(maxSteps), Message: strings.Join(args[1:], " ")}
			if cmd.Flags().Changed("max-tokens") || cmd.Flags().Changed("max-cost-usd") {
				req.Budget = &agentreev1.BudgetConfig{}
				if cmd.Flags().Changed("max-tokens") {
					req.Budget.MaxTokens = &maxTokens
				}
				if cmd.Flags().Changed("max-cost-usd") {
					req.Budget.MaxCostUsd = &maxCost
				}
			}
			ex := &agentreev1.AgentExecution{}
			if err := c.Do(cmd.Context(), "POST", "/agent-executions/"+url.PathEscape(args[0])+"/resume", req, ex); err != nil {
				return fmt.Errorf("resume: %w", err)
			}
			if detach || f.json {
				return printResult(cmd.OutOrStdout(), f, ex, ex.GetId())
			}
			out := cmd.OutOrStdout()
			st := newStyle(out)
			fmt.Fprintln(out, st.dim("execution "+ex.GetId()+" resumes "+args[0]))
			return follow(cmd.Context(), c, f, out, st, ex.GetId(), false)
		},
	}
	addClientFlags(cmd, &f)
	cmd.Flags().IntVar(&maxSteps, "max-steps", 0, "the new session's step budget (0: the paused one's)")
	cmd.Flags().Int64Var(&maxTokens, "max-tokens", 0, "a raised budget.maxTokens for the resumed execution (its spend carries on)")
	cmd.Flags().Float64Var(&maxCost, "max-cost-usd", 0, "a raised budget.maxCostUsd, in USD, for the resumed execution")
	cmd.Flags().BoolVar(&detach, "detach", false, "print the new execution's ID; do not follow")
	return cmd
}
