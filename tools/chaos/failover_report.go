package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// failoverFindings is what the failover did, for the report.
type failoverFindings struct {
	Sync bool
	// Done: the primary was killed and the replica promoted.
	Done bool
	// AsyncLost are acknowledged messages missing after the failover that
	// may have committed after the last replicated commit (asynchronous
	// replication only; taken out of findings.Lost).
	AsyncLost int
	// InRecovery: the promoted replica still says it is a standby.
	InRecovery bool
	// EntriesAfter, SignalsAfter, ExecutionsAfter were stored on the new
	// primary after its promotion: by workers, and by the gateway.
	EntriesAfter, SignalsAfter, ExecutionsAfter int
	fo                                          *failover
}

// failoverFindings dates the lost messages against the last replicated
// commit and reads the new primary directly (not through the two-host
// DSN): nil without -failover.
func (c *cluster) failoverFindings(ctx context.Context, f *findings) (*failoverFindings, error) {
	fo := c.fo
	if fo == nil {
		return nil, nil
	}
	ff := &failoverFindings{Sync: fo.sync, Done: fo.done, fo: fo}
	if !fo.done {
		f.example("failover: the primary was never killed")
		return ff, nil
	}
	if !fo.sync && fo.unreplicatedCommits > 0 {
		kept := f.LostMessages[:0]
		for _, m := range f.LostMessages {
			if !m.AckedAt.Before(fo.firstUnreplicated) {
				ff.AsyncLost++
				f.Lost--
				f.example("failover: %s acknowledged at %s, after the first unreplicated commit (%s): lost with asynchronous replication",
					m.Tag, m.AckedAt.Format("15:04:05.000"), fo.firstUnreplicated.Format("15:04:05.000"))
				continue
			}
			kept = append(kept, m)
		}
		f.LostMessages = kept
	}
	conn, err := pgx.Connect(ctx, fo.replicaURL)
	if err != nil {
		return nil, fmt.Errorf("chaos: failover: new primary: %w", err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery(),
		(SELECT count(*) FROM agent_entry WHERE created_at > $1),
		(SELECT count(*) FROM agent_signal WHERE created_at > $1),
		(SELECT count(*) FROM agent_execution WHERE created_at > $1)`, fo.promotedAt).
		Scan(&ff.InRecovery, &ff.EntriesAfter, &ff.SignalsAfter, &ff.ExecutionsAfter)
	if err != nil {
		return nil, fmt.Errorf("chaos: failover: read the new primary: %w", err)
	}
	return ff, nil
}

// print writes the chaos_failover_* figures (nothing without -failover).
func (ff *failoverFindings) print(w io.Writer) {
	if ff == nil {
		return
	}
	fo := ff.fo
	mode := "async"
	if ff.Sync {
		mode = "sync"
	}
	var saw []string
	for _, code := range slices.Sorted(maps.Keys(fo.clientSaw)) {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "refused"
		}
		saw = append(saw, fmt.Sprintf("%s×%d", name, fo.clientSaw[code]))
	}
	figures := []figure{
		{"chaos_failover_replication", mode},
		{"chaos_failover_done", ff.Done},
		{"chaos_failover_partition_s", seconds(fo.partition)},
		{"chaos_failover_commit_idle_async_p50_ms", millis(percentile(fo.commitAsync, 0.5))},
		{"chaos_failover_commit_idle_async_p99_ms", millis(percentile(fo.commitAsync, 0.99))},
		{"chaos_failover_commit_load_p50_ms", millis(percentile(fo.commitLoad, 0.5))},
		{"chaos_failover_commit_load_p99_ms", millis(percentile(fo.commitLoad, 0.99))},
		{"chaos_failover_replica_received_lsn", fo.receivedLSN},
		{"chaos_failover_primary_lsn", fo.primaryLSN},
		{"chaos_failover_lag_before_kill_bytes", fo.lagBefore},
		{"chaos_failover_unreplicated_bytes", fo.unreplicatedBytes},
		{"chaos_failover_unreplicated_commits", fo.unreplicatedCommits},
		{"chaos_failover_async_lost", ff.AsyncLost},
		{"chaos_failover_promote_s", seconds(fo.promote)},
		{"chaos_failover_promoted_s", seconds(fo.promotedAt.Sub(fo.killAt))},
		{"chaos_failover_gateway_s", seconds(fo.gatewayBack)},
		{"chaos_failover_progress_s", seconds(fo.progressBack)},
		{"chaos_failover_client_saw", strings.Join(saw, ",")},
		{"chaos_failover_new_primary_in_recovery", ff.InRecovery},
		{"chaos_failover_entries_after", ff.EntriesAfter},
		{"chaos_failover_signals_after", ff.SignalsAfter},
		{"chaos_failover_executions_after", ff.ExecutionsAfter},
	}
	printFigures(w, figures)
	if ff.Sync {
		// Measured only when the run is synchronous.
		fmt.Fprintf(w, "chaos_failover_commit_idle_sync_p50_ms=%s\nchaos_failover_commit_idle_sync_p99_ms=%s\n",
			millis(percentile(fo.commitSync, 0.5)), millis(percentile(fo.commitSync, 0.99)))
	}
}

func millis(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
