package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/entrystore"
)

// pruneCmd removes ended executions past their retention, as the workers'
// prune schedule does.
func pruneCmd() *cobra.Command {
	var (
		dryRun, asJSON, keepHistory bool
		org, olderThan, namespace   string
		keepDays, keepFailedDays    int
	)
	cmd := &cobra.Command{
		Use:   "prune [--dry-run] [--org SLUG] [--older-than AGE]",
		Short: "Remove ended executions past their retention (what the daily prune schedule does)",
		Long: `Remove ended executions past their organization's retention (PUT
/api/orgs/{org}/retention; else --keep-days, --keep-failed-days): their
entries, checkpoints, tool calls, signals, stream events, the content no other
execution holds, and their Temporal histories. Live executions are never
touched, nor one a kept execution resumes. --older-than (720h, 30d) removes
every ended execution older than that, whatever the policies. --dry-run prints
what would go and changes nothing. Reads DATABASE_URL and Temporal's
environment configuration, as the worker does.`,
		Example: "  agentree prune --dry-run\n  agentree prune --org acme --older-than 7d",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			age, err := parseAge(olderThan)
			if err != nil {
				return fmt.Errorf("prune: --older-than: %w", err)
			}
			es, closeStore, err := storeFromEnv(ctx, "prune")
			if err != nil {
				return err
			}
			defer closeStore()
			opts := entrystore.PruneOptions{OlderThan: age, DryRun: dryRun,
				Defaults: entrystore.RetentionPolicy{KeepDays: keepDays, KeepFailedDays: keepFailedDays}}
			if org != "" {
				o, err := es.GetOrgBySlug(ctx, org)
				if err != nil {
					return fmt.Errorf("prune: organization %q: %w", org, err)
				}
				opts.OrgID = o.ID
			}
			var tc client.Client
			if !dryRun && !keepHistory {
				topts, err := temporalOptions(namespace)
				if err != nil {
					return fmt.Errorf("prune: %w (or --keep-history)", err)
				}
				if tc, err = client.Dial(topts); err != nil {
					return fmt.Errorf("prune: temporal: %w", err)
				}
				defer tc.Close()
				namespace = topts.Namespace
			}
			stats, err := es.Prune(ctx, opts)
			if err != nil {
				return fmt.Errorf("prune: %w", err)
			}
			histories := 0
			if tc != nil && len(stats.ExecutionIDs) > 0 {
				if histories, err = adapter.DeleteHistories(ctx, tc, namespace, stats.ExecutionIDs, nil); err != nil {
					return fmt.Errorf("prune: %d executions removed; their Temporal histories: %w", stats.Executions, err)
				}
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(adapter.PruneResult{PruneStats: stats, Histories: histories})
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %d executions: %d entries, %d checkpoints, %d tool calls, %d signals, "+
				"%d stream events, %d contents; %s freed; %d Temporal runs deleted\n", verb, stats.Executions, stats.Entries,
				stats.Checkpoints, stats.ToolCalls, stats.Signals, stats.StreamEvents, stats.Contents, bytesText(stats.Bytes), histories)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print what would be removed; change nothing")
	fl.StringVar(&org, "org", "", "only this organization (slug)")
	fl.StringVar(&olderThan, "older-than", "", "remove every ended execution older than this (720h, 30d), whatever the policies")
	fl.IntVar(&keepDays, "keep-days", entrystore.DefaultRetention.KeepDays, "days an ended execution is kept, for organizations without a policy")
	fl.IntVar(&keepFailedDays, "keep-failed-days", entrystore.DefaultRetention.KeepFailedDays, "the same for failed executions")
	fl.BoolVar(&keepHistory, "keep-history", false, "leave the Temporal histories (no Temporal connection needed)")
	fl.StringVar(&namespace, "namespace", "", "Temporal namespace (default: Temporal's environment configuration)")
	fl.BoolVar(&asJSON, "json", false, "print JSON, for scripts")
	return cmd
}

// parseAge reads a Go duration or a whole number of days ("30d"); "" is 0.
func parseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a whole number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (720h, 30d)", s)
	}
	return d, nil
}

// bytesText is n bytes in the largest unit that keeps a whole number.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
