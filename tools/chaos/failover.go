package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/netfault"
)

// The failover mode (-failover, -failover-async): a streaming replica of
// the run's Postgres, made with pg_basebackup -R, on its own port. Every
// client of the store — workers, gateway, migrations, this harness's
// checks — is given one DSN naming both servers with
// target_session_attrs=read-write, so it connects to whichever is the
// primary. Mid-run, while calls are in flight, the primary is stopped at
// once (pg_ctl -m immediate: its backends die with it, as in a crash)
// and the replica promoted (pg_ctl promote). The old primary is not
// brought back: rejoining it as a replica (pg_rewind) is an operator's
// later step, not part of the outage. On one machine the replica receives
// a commit within a millisecond, so a kill alone rarely leaves anything
// unreplicated: -failover-partition cuts the replication link first (a
// partition, then the primary's death), the way commits go missing.
//
// With asynchronous replication (-failover-async) the commits the replica
// had not received when the primary died are gone. failover reads the
// dead primary's WAL past what the replica received (pg_waldump) to count
// them and date the first; an acknowledged message missing afterwards is
// "lost after the last replicated commit" (chaos_failover_async_lost,
// allowed) only if its 2xx arrived after that first unreplicated commit:
// a 2xx comes after its commit, so one acknowledged earlier was
// committed before it, was replicated, and missing it is a bug
// (chaos_lost). With synchronous replication (the default, the one
// Agentree supports for failover: README "Failures") every commit waits
// for the replica, so every missing message is a bug.

// replicaName is the replica's cluster_name, which its WAL receiver
// reports as application_name: synchronous_standby_names names it.
const replicaName = "replica"

// failover is the replica and what happened at the failover.
type failover struct {
	sync                   bool
	partition              time.Duration
	link                   *netfault.Proxy // the replication link, with -failover-partition
	primaryDir, dir        string
	primaryPort, port      int
	primaryURL, replicaURL string
	// Commit latency on the primary: idle asynchronous and (with
	// synchronous replication) synchronous, then in the run's mode under load at the kill.
	commitAsync, commitSync, commitLoad []time.Duration
	done                                bool
	killAt, promotedAt                  time.Time
	receivedLSN, primaryLSN             string
	unreplicatedBytes                   int64
	lagBefore                           int64 // the replica's flush lag in bytes just before the kill
	unreplicatedCommits                 int
	firstUnreplicated                   time.Time     // commit time of the first commit the replica never received
	promote                             time.Duration // pg_ctl promote's own time
	gatewayBack                         time.Duration // kill → a 2xx from the gateway
	progressBack                        time.Duration // kill → the first entry stored on the new primary
	// clientSaw counts the gateway's answers by status while it was away.
	clientSaw map[int]int
}

// pgURL is a single-host DSN of one of the run's servers.
func pgURL(port int) string {
	return fmt.Sprintf("postgres://agentree@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// startReplica makes the replica of the running primary, starts it, waits
// for it to stream (and, replicating synchronously, to be the synchronous
// standby), and points every client at both servers.
func (c *cluster) startReplica(ctx context.Context) error {
	fo := &failover{sync: c.cfg.FailoverSync, partition: c.cfg.FailoverPartition, primaryDir: c.pgDir, primaryPort: c.pgPort,
		dir: filepath.Join(c.dir, "replica"), primaryURL: pgURL(c.pgPort)}
	var err error
	// With -failover-partition the replica streams through a proxy the
	// fault cuts: pg_basebackup -R writes the address it copied from into
	// the replica's primary_conninfo.
	source := strconv.Itoa(fo.primaryPort)
	if fo.partition > 0 {
		if fo.link, err = netfault.Listen("127.0.0.1:" + source); err != nil {
			return fmt.Errorf("chaos: failover: %w", err)
		}
		c.undo = append(c.undo, func() { _ = fo.link.Close() })
		_, source, _ = strings.Cut(fo.link.Addr(), ":")
	}
	if fo.port, err = freePort(); err != nil {
		return err
	}
	fo.replicaURL = pgURL(fo.port)
	if err := postgresDir(fo.dir); err != nil {
		return err
	}
	// -R writes standby.signal and primary_conninfo; -X stream copies the
	// WAL written during the copy, so the replica starts consistent.
	if err := runPG(ctx, "pg_basebackup", "-D", fo.dir, "-R", "-X", "stream", "-c", "fast",
		"-h", "127.0.0.1", "-p", source, "-U", "agentree"); err != nil {
		return err
	}
	// The copied postgresql.conf is the primary's: a later line wins.
	conf := fmt.Sprintf("port = %d\ncluster_name = '%s'\n", fo.port, replicaName)
	if err := appendFile(filepath.Join(fo.dir, "postgresql.conf"), conf); err != nil {
		return err
	}
	c.undo = append(c.undo, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgStopTimeout)
		defer cancel()
		_ = runPG(sctx, "pg_ctl", "-D", fo.dir, "-m", "immediate", "-w", "stop")
	})
	if err := runPG(ctx, "pg_ctl", "-D", fo.dir, "-l", filepath.Join(fo.dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, fo.primaryURL)
	if err != nil {
		return fmt.Errorf("chaos: failover: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	streaming := func(want string) error {
		err := pollUntil(ctx, time.Minute, func() (bool, error) {
			var state string
			err := conn.QueryRow(ctx, `SELECT coalesce(max(sync_state), '') FROM pg_stat_replication
				WHERE application_name = $1 AND state = 'streaming'`, replicaName).Scan(&state)
			return state == want, err
		})
		if err != nil {
			return fmt.Errorf("chaos: failover: the replica never streamed as %s: %w", want, err)
		}
		return nil
	}
	if err := streaming("async"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE chaos_commit_probe (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("chaos: failover: %w", err)
	}
	// Commit latency on the idle cluster, asynchronous first and then,
	// replicating synchronously, synchronous: the same server, one after the
	// other, is the fair comparison.
	if fo.commitAsync, err = commitLatency(ctx, conn, commitProbes); err != nil {
		return err
	}
	want := "async"
	if fo.sync {
		// Set on the primary only, after the copy: the replica keeps the
		// primary's configuration files, and a promoted replica waiting
		// for a standby of its own would block every commit.
		if _, err := conn.Exec(ctx, fmt.Sprintf(`ALTER SYSTEM SET synchronous_standby_names = '"%s"'`, replicaName)); err != nil {
			return fmt.Errorf("chaos: failover: %w", err)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
			return fmt.Errorf("chaos: failover: %w", err)
		}
		want = "sync"
		if err := streaming(want); err != nil {
			return err
		}
		if fo.commitSync, err = commitLatency(ctx, conn, commitProbes); err != nil {
			return err
		}
	}
	c.fo = fo
	// Every client names both servers and takes the one that accepts
	// writes: libpq's and pgx's multi-host form.
	c.dbURL = fmt.Sprintf("postgres://agentree@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write", fo.primaryPort, fo.port)
	c.logf("chaos: replica on %d streaming (%s); clients use %s", fo.port, want, c.dbURL)
	return nil
}

// commitProbes is how many one-row commits measure the commit latency.
const commitProbes = 200

// commitLatency times n one-row autocommitted inserts on conn: with
// synchronous replication each waits for the replica's flush.
func commitLatency(ctx context.Context, conn *pgx.Conn, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := conn.Exec(ctx, `INSERT INTO chaos_commit_probe DEFAULT VALUES`); err != nil {
			return out, fmt.Errorf("chaos: failover: commit probe: %w", err)
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// failover is the fault: the primary killed, the replica promoted, the
// clients' return timed.
func (in *injector) failover(ctx context.Context, f *fault, calls []inFlight) error {
	c, fo := in.c, in.c.fo
	for _, cl := range calls {
		f.InFlight = append(f.InFlight, cl.exec)
	}
	if conn, err := pgx.Connect(ctx, fo.primaryURL); err == nil {
		fo.commitLoad, err = commitLatency(ctx, conn, commitProbes)
		if err == nil {
			// How far behind the replica runs under this load, as the
			// primary sees it: the bytes an async kill would lose now.
			err = conn.QueryRow(ctx, `SELECT coalesce(max(pg_wal_lsn_diff(pg_current_wal_flush_lsn(), flush_lsn)), 0)::bigint
				FROM pg_stat_replication WHERE application_name = $1`, replicaName).Scan(&fo.lagBefore)
		}
		conn.Close(ctx)
		if err != nil {
			return fmt.Errorf("chaos: failover: %w", err)
		}
	}
	if fo.partition > 0 {
		fo.link.Cut()
		if err := sleepCtx(ctx, fo.partition); err != nil {
			return err
		}
	}
	f.At = time.Now()
	fo.killAt = f.At
	if err := c.stopPostgres(ctx); err != nil {
		return err
	}
	// pg_ctl promote replays all the replica received before it
	// promotes: what it received is what survives.
	received, err := receivedLSN(ctx, fo.replicaURL)
	if err != nil {
		return err
	}
	fo.receivedLSN = received
	w, err := walAfter(ctx, fo.primaryDir, received)
	if err != nil {
		return err
	}
	fo.primaryLSN, fo.unreplicatedCommits, fo.firstUnreplicated = w.end, w.commits, w.firstCommit
	fo.unreplicatedBytes = lsnDiff(w.end, received)
	t := time.Now()
	if err := runPG(ctx, "pg_ctl", "-D", fo.dir, "-w", "-t", "60", "promote"); err != nil {
		return err
	}
	fo.promotedAt = time.Now()
	fo.promote = fo.promotedAt.Sub(t)
	fo.done = true
	// Postgres restarts and outages after this one hit the new primary.
	c.pgDir = fo.dir
	if fo.partition > 0 {
		f.Detail = fmt.Sprintf("replication cut %s before; ", fo.partition)
	}
	f.Detail += fmt.Sprintf("replica promoted in %.1fs; it had received %s, the primary had written %s (%d bytes, %d commits not replicated)",
		fo.promote.Seconds(), fo.receivedLSN, fo.primaryLSN, fo.unreplicatedBytes, fo.unreplicatedCommits)
	if err := fo.awaitGateway(ctx, c); err != nil {
		return err
	}
	return fo.awaitProgress(ctx)
}

// receivedLSN is the end of the WAL the replica received and flushed.
// Its replay may be behind (a standby whose source is gone looks again
// only every wal_retrieve_retry_interval, 5 s): promotion replays it all
// first, so this, not the replay position, is what survives.
func receivedLSN(ctx context.Context, url string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("chaos: failover: replica: %w", err)
	}
	defer conn.Close(ctx)
	var lsn string
	if err := conn.QueryRow(ctx, `SELECT pg_last_wal_receive_lsn()::text`).Scan(&lsn); err != nil {
		return "", fmt.Errorf("chaos: failover: replica: %w", err)
	}
	return lsn, nil
}

// awaitGateway polls a read through the gateway until it answers 2xx:
// the gateway reaches only a server that accepts writes, so a 2xx comes
// from the new primary. The answers before it are what clients saw.
func (fo *failover) awaitGateway(ctx context.Context, c *cluster) error {
	fo.clientSaw = map[int]int{}
	req := func() (int, error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := http.NewRequestWithContext(rctx, "GET", "http://"+c.gatewayAddr+"/api/orgs/"+c.org+"/agent-executions?limit=1", nil)
		if err != nil {
			return 0, err
		}
		r.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	err := pollUntil(ctx, 2*time.Minute, func() (bool, error) {
		code, err := req()
		if err != nil {
			fo.clientSaw[0]++
			return false, nil
		}
		fo.clientSaw[code]++
		return code/100 == 2, nil
	})
	if err != nil {
		return fmt.Errorf("the gateway did not answer from the new primary within 2m: %w", err)
	}
	fo.gatewayBack = time.Since(fo.killAt)
	return nil
}

// awaitProgress waits for the first entry a worker stores on the new
// primary.
func (fo *failover) awaitProgress(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, fo.replicaURL)
	if err != nil {
		return fmt.Errorf("chaos: failover: new primary: %w", err)
	}
	defer conn.Close(ctx)
	var first time.Time
	err = pollUntil(ctx, 2*time.Minute, func() (bool, error) {
		var at *time.Time
		err := conn.QueryRow(ctx, `SELECT min(created_at) FROM agent_entry WHERE created_at > $1`, fo.promotedAt).Scan(&at)
		if at != nil {
			first = *at
		}
		return at != nil, err
	})
	if err != nil {
		return fmt.Errorf("no worker stored an entry on the new primary within 2m: %w", err)
	}
	fo.progressBack = first.Sub(fo.killAt)
	return nil
}

// failoverTemporalConfig makes the Temporal server's persistence follow
// the failover too (-temporal-server): scripts/services.sh writes one
// host for the default postgres12 plugin (lib/pq, which takes one host);
// the postgres12_pgx plugin puts connectAddr verbatim into a pgx URL, so
// it takes both hosts and target_session_attrs like every other client.
func (c *cluster) failoverTemporalConfig() error {
	path := filepath.Join(c.dir, "temporal-server", "agentree.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("chaos: failover: %w", err)
	}
	s := string(b)
	addr := fmt.Sprintf("connectAddr: 127.0.0.1:%d\n", c.fo.primaryPort)
	both := fmt.Sprintf("connectAddr: 127.0.0.1:%d,127.0.0.1:%d\n        connectAttributes:\n          target_session_attrs: read-write\n", c.fo.primaryPort, c.fo.port)
	if strings.Count(s, "pluginName: postgres12\n") != 2 || strings.Count(s, addr) != 2 {
		return fmt.Errorf("chaos: failover: %s does not name the postgres12 plugin on 127.0.0.1:%d for both stores: scripts/services.sh changed", path, c.fo.primaryPort)
	}
	s = strings.ReplaceAll(s, "pluginName: postgres12\n", "pluginName: postgres12_pgx\n")
	s = strings.ReplaceAll(s, addr, both)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("chaos: failover: %w", err)
	}
	return nil
}

// appendFile appends s to the file at path.
func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

// pollUntil calls done every 100 ms until it says true, fails, or d
// passes.
func pollUntil(ctx context.Context, d time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(d)
	for {
		ok, err := done()
		switch {
		case ok:
			return nil
		case time.Now().After(deadline):
			if err == nil {
				err = fmt.Errorf("not within %s", d)
			}
			return err
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}
