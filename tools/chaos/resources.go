package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/netfault"
)

// The resource faults (-resources, issue 42): a resource runs out or
// slows while the default chaos load runs, and comes back after
// -resource-hold. What an operator should expect of each is written down
// here first (and in the README's "-resources" section), then asserted by
// checkResources and TestFullDiskPausesNotFails:
//
//   - pg-disk-full: Postgres's filesystem is full (a file the harness
//     writes until ENOSPC). Writes through the gateway answer 503 with
//     Retry-After, never 500; executions wait (none FAILED), nothing
//     acknowledged is lost; once the file is removed, writes are
//     acknowledged again, the Idempotency-Keys of refused requests are
//     freed (a retry runs rather than answering 409 for the key's lease),
//     and the paused executions go on. Should Postgres
//     stop (a PANIC when it cannot write WAL) it is started again once
//     there is room, as systemd or Kubernetes would.
//   - pg-connections: another client holds every connection Postgres
//     allows (it refuses the next with "too many clients"). Requests that
//     need a new connection answer 503 with Retry-After, never 500;
//     pooled connections keep working; nothing fails or is lost.
//   - pg-slow: a proxy between every service and Postgres delays each
//     packet by -slow-delay each way. Requests take seconds but succeed
//     (or 503 with Retry-After, never 500); executions slow down, none
//     fails; nothing is lost.
//   - model-hang: one model call's server sends a token and then nothing,
//     without closing the stream. The call is given up on (the first,
//     local attempt at LocalCallLimit, 20 s by default) and made again;
//     the execution finishes with one answer, nothing run twice.
const (
	pgDiskFull    = "pg-disk-full"
	pgConnections = "pg-connections"
	pgSlow        = "pg-slow"
	modelHang     = "model-hang"
)

// resourceFaults are the resource faults, in the order their figures print.
var resourceFaults = []string{pgDiskFull, pgConnections, pgSlow, modelHang}

// resourceKinds are the resource faults a run injects: with -resources,
// each of -resource-faults once; none without.
func resourceKinds(cfg config) []string {
	if !cfg.Resources {
		return nil
	}
	return cfg.ResourceFaults
}

// parseResourceFaults reads -resource-faults: names from resourceFaults,
// comma-separated.
func parseResourceFaults(list string) ([]string, error) {
	var out []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !slices.Contains(resourceFaults, k) {
			return nil, fmt.Errorf("chaos: -resource-faults: %q is none of %s", k, strings.Join(resourceFaults, ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

// recoverWait bounds how long a resource fault waits, once the resource is
// back, for the service to recover.
const recoverWait = 3 * time.Minute

// resources is a -resources run's state: the small filesystem, the proxy
// in front of Postgres, and what each fault measured.
type resources struct {
	disk  string // mount point of Postgres's small filesystem
	proxy *netfault.Proxy

	mu      sync.Mutex
	results map[*fault]*resourceResult
}

// resourceResult is what one resource fault measured.
type resourceResult struct {
	// Released is when the resource came back; Recovered, when the first
	// write sent after that was acknowledged (zero: never).
	Released, Recovered time.Time
	// Execs are the executions a hung model call belonged to.
	Execs []string

	mu     sync.Mutex
	writes []probeWrite
}

func (r *resourceResult) add(w probeWrite) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, w)
}

func (r *resourceResult) snapshot() []probeWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]probeWrite(nil), r.writes...)
}

// mountPostgresDisk puts the data directory on a tmpfs of -pg-disk-mb
// (with -resources): the disk-full fault fills it. Mounting needs root;
// without it the run stops with an error saying so.
func (c *cluster) mountPostgresDisk(ctx context.Context) error {
	if !c.cfg.Resources {
		return nil
	}
	c.res = &resources{disk: filepath.Join(c.dir, "pgdisk"), results: map[*fault]*resourceResult{}}
	if err := os.Mkdir(c.res.disk, 0o755); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	size := fmt.Sprintf("size=%dm,mode=0755", c.cfg.PGDiskMB)
	if b, err := exec.CommandContext(ctx, "mount", "-t", "tmpfs", "-o", size, "tmpfs", c.res.disk).CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: -resources puts Postgres on a small filesystem and cannot mount one here (mount -t tmpfs needs root): %w\n%s", err, b)
	}
	// After Postgres has stopped (undo runs newest first).
	c.undo = append(c.undo, func() {
		if c.cfg.Keep { // the data directory goes with the filesystem; its log stays
			if b, err := os.ReadFile(filepath.Join(c.pgDir, "server.log")); err == nil {
				_ = os.WriteFile(filepath.Join(c.dir, "postgres-server.log"), b, 0o644)
			}
		}
		if b, err := exec.Command("umount", c.res.disk).CombinedOutput(); err != nil {
			c.logf("chaos: umount %s: %v %s", c.res.disk, err, b)
		}
	})
	c.pgDir = filepath.Join(c.res.disk, "data")
	return nil
}

// resourceConf keeps Postgres's WAL small with -resources, so the
// filesystem's room is the data's and the filler's.
func (c *cluster) resourceConf() string {
	if c.res == nil {
		return ""
	}
	return "max_wal_size = 64MB\nmin_wal_size = 32MB\n"
}

// startResourceProxy puts a proxy (internal/netfault) between every
// client of Postgres and Postgres, with -resources: the slow fault
// delays its packets. The harness's own checks go through it too.
func (c *cluster) startResourceProxy() error {
	if c.res == nil {
		return nil
	}
	p, err := netfault.Listen("127.0.0.1:" + strconv.Itoa(c.pgPort))
	if err != nil {
		return fmt.Errorf("chaos: postgres proxy: %w", err)
	}
	c.res.proxy = p
	c.undo = append(c.undo, func() { _ = p.Close() })
	c.dbURL = fmt.Sprintf("postgres://agentree@%s/postgres?sslmode=disable", p.Addr())
	return nil
}

// clientPGPort is the port Postgres's clients use: the proxy's with
// -resources.
func (c *cluster) clientPGPort() int {
	if c.res == nil {
		return c.pgPort
	}
	_, port, _ := net.SplitHostPort(c.res.proxy.Addr())
	n, _ := strconv.Atoi(port)
	return n
}

// directURL reaches Postgres itself, not through the proxy.
func (c *cluster) directURL() string {
	return fmt.Sprintf("postgres://agentree@127.0.0.1:%d/postgres?sslmode=disable", c.pgPort)
}

// hangFile arms the scripted model's one hang (scripted.EnvHang).
func (c *cluster) hangFile() string { return filepath.Join(c.dir, "model-hang") }

// resourceWorkerEnv is what the workers need for the model-hang fault.
func (c *cluster) resourceWorkerEnv() []string {
	if c.res == nil {
		return nil
	}
	return []string{scripted.EnvHang + "=" + c.hangFile()}
}

// fireResource injects a resource fault; handled is false for any other.
func (in *injector) fireResource(ctx context.Context, f *fault, calls []inFlight) (handled bool, err error) {
	c := in.c
	if c.res == nil || !slices.Contains(resourceFaults, f.Kind) {
		return false, nil
	}
	r := &resourceResult{}
	c.res.mu.Lock()
	tag := fmt.Sprintf("%s-%d", f.Kind, len(c.res.results))
	c.res.results[f] = r
	c.res.mu.Unlock()
	if f.Kind == modelHang {
		return true, in.hangModel(ctx, f, r)
	}
	for _, cl := range calls {
		f.InFlight = append(f.InFlight, cl.exec)
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() { defer close(probed); c.probeWrites(probeCtx, tag, r) }()
	defer func() { stopProbe(); <-probed }()

	f.At = time.Now()
	var release func(context.Context) error
	switch f.Kind {
	case pgDiskFull:
		release, err = c.fillDisk(f)
	case pgConnections:
		release, err = c.hogConnections(ctx, f)
	case pgSlow:
		c.res.proxy.SetDelay(in.cfg.SlowDelay)
		f.Detail = fmt.Sprintf("every packet +%s each way", in.cfg.SlowDelay)
		release = func(context.Context) error { c.res.proxy.SetDelay(0); return nil }
	}
	if err != nil {
		return true, err
	}
	holdErr := sleepCtx(ctx, in.cfg.ResourceHold)
	relErr := release(context.WithoutCancel(ctx))
	r.Released = time.Now()
	if err := errors.Join(holdErr, relErr); err != nil {
		return true, err
	}
	return true, c.awaitRecovery(ctx, f, r)
}

// fillDisk writes a file on Postgres's filesystem until it is full; the
// release removes it.
func (c *cluster) fillDisk(f *fault) (func(context.Context) error, error) {
	path := filepath.Join(c.res.disk, "filler")
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the filler: %w", err)
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := fh.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			fh.Close()
			_ = os.Remove(path)
			return nil, fmt.Errorf("fill the disk: %w", err)
		}
	}
	fh.Close()
	f.Detail = fmt.Sprintf("filled with %d MiB", n>>20)
	return func(context.Context) error {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove the filler: %w", err)
		}
		return nil
	}, nil
}

// hogConnections opens connections straight to Postgres until it refuses
// one; the release closes them.
func (c *cluster) hogConnections(ctx context.Context, f *fault) (func(context.Context) error, error) {
	var held []*pgconn.PgConn
	release := func(ctx context.Context) error {
		for _, pc := range held {
			_ = pc.Close(ctx)
		}
		return nil
	}
	var refused error
	for len(held) < 1000 {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		pc, err := pgconn.Connect(cctx, c.directURL())
		cancel()
		if err != nil {
			refused = err
			break
		}
		held = append(held, pc)
	}
	var pgErr *pgconn.PgError
	if !errors.As(refused, &pgErr) || pgErr.Code != "53300" {
		_ = release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("Postgres did not refuse a connection for too many clients after %d: %v", len(held), refused)
	}
	f.Detail = fmt.Sprintf("held %d connections (then %s)", len(held), pgErr.Code)
	return release, nil
}

// awaitRecovery waits, once the resource is back, for a write sent after
// that to be acknowledged. Should Postgres have stopped while its disk
// was full, it is started again, as a service manager would.
func (c *cluster) awaitRecovery(ctx context.Context, f *fault, r *resourceResult) error {
	deadline := r.Released.Add(recoverWait)
	restarted := false
	for time.Now().Before(deadline) {
		for _, w := range r.snapshot() {
			if w.Acked && !w.Start.Before(r.Released) {
				r.Recovered = w.Start.Add(w.Took)
				return nil
			}
		}
		if f.Kind == pgDiskFull && !restarted && !c.postgresRunning(ctx) {
			restarted = true
			f.Detail += "; Postgres had stopped and was started again"
			if err := c.startPostgresServer(ctx); err != nil {
				return err
			}
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no write acknowledged within %s of the resource's return", recoverWait)
}

// hangModel arms the scripted model's one hang and waits for a call to
// take it, then for that call to be made again and answered.
func (in *injector) hangModel(ctx context.Context, f *fault, r *resourceResult) error {
	c := in.c
	f.At = time.Now()
	if err := os.WriteFile(c.hangFile(), nil, 0o644); err != nil {
		return fmt.Errorf("arm the hang: %w", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var hang *scripted.CallRecord
	for hang == nil {
		if time.Now().After(deadline) {
			_ = os.Remove(c.hangFile())
			return fmt.Errorf("no model call streamed text within 2m to take the hang")
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
		recs, err := readCallLog(c.callLog())
		if err != nil {
			return err
		}
		for i := range recs {
			if recs[i].Phase == "hang" {
				hang = &recs[i]
			}
		}
	}
	f.At, f.Gated = hang.At, true
	r.Released = hang.At // nothing comes back: the call must be given up on
	for prefix, id := range in.tags() {
		if strings.HasPrefix(hang.User, prefix) {
			f.InFlight = append(f.InFlight, id)
			r.Execs = append(r.Execs, id)
		}
	}
	f.Detail = fmt.Sprintf("turn %d of %.24s…", hang.Turn, hang.User)
	// A hang on an activity attempt lasts until ModelTimeout (10 min).
	deadline = hang.At.Add(12 * time.Minute)
	for time.Now().Before(deadline) {
		recs, err := readCallLog(c.callLog())
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if rec.Phase == "end" && rec.Turn == hang.Turn && rec.User == hang.User && rec.At.After(hang.At) {
				r.Recovered = rec.At
				return nil
			}
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("the hung model call was not made again and answered within 12m")
}

// postgresRunning asks pg_ctl whether the server runs.
func (c *cluster) postgresRunning(ctx context.Context) bool {
	return asPostgres(ctx, "pg_ctl", "-D", c.pgDir, "status").Run() == nil
}
