package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// quotaCmd reads and sets the organization's quotas (GET/PUT …/quota).
func quotaCmd() *cobra.Command {
	quota := &cobra.Command{
		Use:   "quota",
		Short: "Show or set the organization's quotas (running executions, tokens and cost per day)",
		Long: `Show or set the organization's quotas. Past maxRunning, creates, resumes and
forks answer 429 quota_exceeded. Once the UTC day's spend reaches tokensPerDay
or costPerDay, model calls are refused: their executions end PAUSED with stop
reason budget, and ` + "`agentree resume`" + ` continues them once the day resets or
the quota is raised. 0 is no limit.`,
		Args: cobra.NoArgs,
	}
	var gf clientFlags
	get := &cobra.Command{
		Use:   "get",
		Short: "Show the quotas and today's spend",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := gf.client()
			if err != nil {
				return err
			}
			q := &agentreev1.OrgQuota{}
			if err := c.Do(cmd.Context(), "GET", "/quota", nil, q); err != nil {
				return fmt.Errorf("quota get: %w", err)
			}
			return printQuota(cmd.OutOrStdout(), gf, q)
		},
	}
	addClientFlags(get, &gf)

	var sf clientFlags
	var maxRunning int32
	var tokensPerDay int64
	var costPerDay float64
	set := &cobra.Command{
		Use:     "set [--max-running N] [--tokens-per-day N] [--cost-per-day USD]",
		Short:   "Set quotas; a limit not named keeps its value, 0 removes it",
		Example: "  agentree quota set --max-running 20 --tokens-per-day 2000000 --cost-per-day 50",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := sf.client()
			if err != nil {
				return err
			}
			cur := &agentreev1.OrgQuota{}
			if err := c.Do(cmd.Context(), "GET", "/quota", nil, cur); err != nil {
				return fmt.Errorf("quota set: %w", err)
			}
			req := &agentreev1.SetOrgQuotaRequest{MaxRunning: cur.GetMaxRunning(), TokensPerDay: cur.GetTokensPerDay(), CostPerDay: cur.GetCostPerDay()}
			fl := cmd.Flags()
			if fl.Changed("max-running") {
				req.MaxRunning = maxRunning
			}
			if fl.Changed("tokens-per-day") {
				req.TokensPerDay = tokensPerDay
			}
			if fl.Changed("cost-per-day") {
				req.CostPerDay = costPerDay
			}
			q := &agentreev1.OrgQuota{}
			if err := c.Do(cmd.Context(), "PUT", "/quota", req, q); err != nil {
				return fmt.Errorf("quota set: %w", err)
			}
			return printQuota(cmd.OutOrStdout(), sf, q)
		},
	}
	addClientFlags(set, &sf)
	set.Flags().Int32Var(&maxRunning, "max-running", 0, "executions not ended at once (0: no limit)")
	set.Flags().Int64Var(&tokensPerDay, "tokens-per-day", 0, "model tokens (input + output) per UTC day (0: no limit)")
	set.Flags().Float64Var(&costPerDay, "cost-per-day", 0, "model cost per UTC day, in USD (0: no limit)")
	quota.AddCommand(get, set)
	return quota
}

// printQuota prints each limit beside what is used of it.
func printQuota(w io.Writer, f clientFlags, q *agentreev1.OrgQuota) error {
	if f.json {
		_, err := fmt.Fprintf(w, "%s\n", compactJSON(q))
		return err
	}
	limit := func(v string) string {
		if v == "0" {
			return "no limit"
		}
		return v
	}
	_, err := fmt.Fprintf(w, "maxRunning    %-12s %d not ended\ntokensPerDay  %-12s %d today\ncostPerDay    %-12s %s USD today\nresets at     %s\n",
		limit(strconv.Itoa(int(q.GetMaxRunning()))), q.GetRunning(),
		limit(strconv.FormatInt(q.GetTokensPerDay(), 10)), q.GetTokensToday(),
		limit(strconv.FormatFloat(q.GetCostPerDay(), 'f', -1, 64)), strconv.FormatFloat(q.GetCostToday(), 'f', -1, 64),
		q.GetResetsAt().AsTime().Format(time.RFC3339))
	return err
}
