package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/migrations"
)

// cluster is one run's private world: a Postgres cluster, a Temporal dev
// server, workers and a gateway, each a separate process on its own port,
// all under one temporary directory.
type cluster struct {
	cfg          config
	dir          string // everything of this run; kept with -keep
	bin          string // the agentree binary
	queue        string
	pgDir        string
	pgPort       int
	dbURL        string
	temporalAddr string
	gatewayAddr  string

	temporal *proc
	gateway  *proc
	workers  []*proc

	pool  *pgxpool.Pool // the harness's own, for the checks
	tc    client.Client // the harness's own, to see what is in flight
	org   string
	key   string
	undo  []func()
	logTo io.Writer
	start time.Time

	deploy *deployment // with -deploy (deploy.go)
	res    *resources  // -resources (resources.go); nil without
	fo     *failover   // with -failover: the replica (failover.go)
	// soakMetrics maps a process's name to its metrics endpoint's address
	// (soak.go).
	soakMetrics map[string]string
}

// callLog is the file the workers' scripted model logs its calls to.
func (c *cluster) callLog() string { return filepath.Join(c.dir, "model-calls.jsonl") }

// startCluster brings everything up. On error, what was started is
// stopped; otherwise close stops it.
func startCluster(ctx context.Context, cfg config, logTo io.Writer) (c *cluster, err error) {
	dir, err := os.MkdirTemp("", "agentree-chaos-")
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	// The postgres user must reach the cluster's directory inside.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	c = &cluster{cfg: cfg, dir: dir, queue: "chaos-" + filepath.Base(dir), logTo: logTo, start: time.Now()}
	c.undo = append(c.undo, func() {
		if !cfg.Keep {
			_ = os.RemoveAll(dir)
		}
	})
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	c.logf("chaos: run directory %s", dir)
	if c.bin, err = buildAgentree(ctx, cfg, dir); err != nil {
		return c, err
	}
	c.logf("chaos: built %s", c.bin)
	if cfg.Deploy {
		if err = c.prepareDeploy(ctx); err != nil {
			return c, err
		}
	}
	if cfg.ActivityToolCalls || cfg.ActivityModelCalls {
		if err = c.writeWorkerConfig(); err != nil {
			return c, err
		}
	}
	if cfg.Soak {
		if err = c.soakPrepare(); err != nil {
			return c, err
		}
	}
	if err = c.startPostgres(ctx); err != nil {
		return c, err
	}
	if err = c.startResourceProxy(); err != nil { // resources.go
		return c, err
	}
	if cfg.Failover {
		if err = c.startReplica(ctx); err != nil {
			return c, err
		}
	}
	if err = c.startTemporal(ctx); err != nil {
		return c, err
	}
	c.logf("chaos: Postgres on %d, Temporal on %s", c.pgPort, c.temporalAddr)
	if c.deploy != nil {
		err = c.deploy.migrateOld(ctx, c)
	} else {
		err = migrations.ApplyURL(ctx, c.dbURL)
	}
	if err != nil {
		return c, err
	}
	if c.pool, err = pgxpool.New(ctx, c.dbURL); err != nil {
		return c, fmt.Errorf("chaos: postgres: %w", err)
	}
	c.undo = append(c.undo, c.pool.Close)
	if c.deploy != nil {
		c.org, c.key, err = c.deploy.makeKey(ctx, c)
	} else {
		c.org, c.key, err = c.makeKey(ctx)
	}
	if err != nil {
		return c, err
	}
	for i := range cfg.Workers {
		w := c.workerProc(i)
		if err = w.start(); err != nil {
			return c, err
		}
		c.workers = append(c.workers, w)
		c.undo = append(c.undo, func() { w.stop(10 * time.Second) })
	}
	port, err := freePort()
	if err != nil {
		return c, err
	}
	c.gatewayAddr = "127.0.0.1:" + strconv.Itoa(port)
	c.gateway = c.gatewayProc()
	if err = c.gateway.start(); err != nil {
		return c, err
	}
	c.undo = append(c.undo, func() { c.gateway.stop(10 * time.Second) })
	if err = c.waitGateway(ctx, time.Minute); err != nil {
		return c, err
	}
	c.logf("chaos: %d workers and the gateway on %s are up", len(c.workers), c.gatewayAddr)
	return c, nil
}

// makeKey makes the run's organization and its API key.
func (c *cluster) makeKey(ctx context.Context) (org, key string, err error) {
	es := entrystore.New(c.pool)
	o, err := es.EnsureOrg(ctx, "chaos")
	if err != nil {
		return "", "", err
	}
	key, _, err = es.CreateAPIKey(ctx, o.ID, "chaos")
	return o.Slug, key, err
}

// close stops everything, newest first.
func (c *cluster) close() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		c.undo[i]()
	}
	c.undo = nil
}

func (c *cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.logTo, "%6.1fs "+format+"\n", append([]any{time.Since(c.start).Seconds()}, args...)...)
}

// buildAgentree builds cmd/agentree from this checkout, unless -bin names
// a binary.
func buildAgentree(ctx context.Context, cfg config, dir string) (string, error) {
	if cfg.Bin != "" {
		return cfg.Bin, nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "agentree")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/agentree")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chaos: go build ./cmd/agentree: %w\n%s", err, b)
	}
	return bin, nil
}

// moduleRoot is this checkout's directory.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return "", fmt.Errorf("chaos: find the module root (go env GOMOD): %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// freePort asks the kernel for a port no one listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("chaos: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// asPostgres runs a PostgreSQL program as the postgres user when this
// process is root (the server refuses to run as root), as scripts/services.sh
// does.
func asPostgres(ctx context.Context, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--"}, args...)...)
	}
	return exec.CommandContext(ctx, args[0], args[1:]...)
}

func runPG(ctx context.Context, args ...string) error {
	if b, err := asPostgres(ctx, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// startPostgres makes and starts the private cluster.
func (c *cluster) startPostgres(ctx context.Context) error {
	if _, err := exec.LookPath("initdb"); err != nil {
		return errors.New("chaos: PostgreSQL server binaries (initdb, pg_ctl) not on PATH (Debian: apt-get install postgresql)")
	}
	c.pgDir = filepath.Join(c.dir, "postgres")
	// resources.go: with -resources the data directory moves onto a small
	// filesystem that the disk-full fault fills.
	if err := c.mountPostgresDisk(ctx); err != nil {
		return err
	}
	sock := filepath.Join(c.dir, "pgsock")
	for _, d := range []string{c.pgDir, sock} {
		if err := postgresDir(d); err != nil {
			return err
		}
	}
	if err := runPG(ctx, "initdb", "-D", c.pgDir, "-U", "agentree", "--auth=trust", "-E", "UTF8", "--no-locale"); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.pgPort = port
	conf := filepath.Join(c.pgDir, "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	_, err = f.WriteString(postgresConf(port, sock) + c.resourceConf())
	f.Close()
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c.dbURL = fmt.Sprintf("postgres://agentree@127.0.0.1:%d/postgres?sslmode=disable", port)
	c.undo = append(c.undo, func() { _ = c.stopPostgres(context.WithoutCancel(ctx)) })
	return c.startPostgresServer(ctx)
}

// postgresDir makes directory d for the server: owned by the postgres
// user when this process is root.
func postgresDir(d string) error {
	if err := os.Mkdir(d, 0o700); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("chaos: running as root needs a postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(d, uid, gid); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

func (c *cluster) startPostgresServer(ctx context.Context) error {
	return runPG(ctx, "pg_ctl", "-D", c.pgDir, "-l", filepath.Join(c.pgDir, "server.log"), "-w", "-t", "60", "start")
}

// stopPostgres stops the cluster at once (immediate: as a crash would,
// with recovery at the next start).
func (c *cluster) stopPostgres(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStopTimeout)
	defer cancel()
	return runPG(ctx, "pg_ctl", "-D", c.pgDir, "-m", "immediate", "-w", "stop")
}

// startTemporal starts the private Temporal dev server and the harness's
// client of it.
func (c *cluster) startTemporal(ctx context.Context) error {
	if _, err := os.Stat(c.cfg.TemporalBin); err != nil {
		return fmt.Errorf("chaos: the Temporal CLI %s: %w (scripts/services.sh temporal-bin builds it)", c.cfg.TemporalBin, err)
	}
	var port int
	if c.cfg.TemporalServer {
		p, err := temporaltest.FreeServerPorts()
		if err != nil {
			return err
		}
		port = p
		if c.temporal, err = c.temporalServerProc(ctx, port); err != nil {
			return err
		}
	} else {
		var ports [3]int
		for i := range ports {
			p, err := freePort()
			if err != nil {
				return err
			}
			ports[i] = p
		}
		port = ports[0]
		c.temporal = c.temporalProc(ports[0], ports[1], ports[2])
	}
	c.temporalAddr = "127.0.0.1:" + strconv.Itoa(port)
	if err := c.temporal.start(); err != nil {
		return err
	}
	c.undo = append(c.undo, func() { c.temporal.stop(10 * time.Second) })
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tc, err := client.Dial(client.Options{HostPort: c.temporalAddr, Logger: quiet})
		if err == nil {
			c.tc = tc
			c.undo = append(c.undo, tc.Close)
			if c.cfg.TemporalServer {
				// The server makes no namespace of its own.
				_, err = c.services(ctx, port, "temporal-server-namespace")
			}
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: the Temporal server did not answer within 2m (log %s): %w", c.temporal.logPath, err)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// temporalHealthy reports whether the dev server answers.
func (c *cluster) temporalHealthy(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := c.tc.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err == nil
}

// waitGateway waits for the gateway's /healthz.
func (c *cluster) waitGateway(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		resp, err := http.Get("http://" + c.gatewayAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: the gateway did not become healthy within %s (log %s)", d, c.gateway.logPath)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
