package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The Temporal server mode (-temporal-server; `AGENTREE_TEMPORAL=server
// make chaos`): the Temporal server itself on the run's private Postgres
// cluster instead of the dev server. scripts/services.sh sets it up
// (databases, schema, configuration, namespace) as it does for
// `AGENTREE_TEMPORAL=server make up`, so that lives in one place; this
// harness only supervises the process.

// services runs `scripts/services.sh cmd` in the server mode for the
// cluster's Postgres and a Temporal server on port, and returns its
// standard output.
func (c *cluster) services(ctx context.Context, port int, cmd string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	x := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "services.sh"), cmd)
	// The shared services' addresses would make the script use them.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DATABASE_URL" && k != "TEMPORAL_ADDRESS" && !strings.HasPrefix(k, "AGENTREE_") {
			x.Env = append(x.Env, kv)
		}
	}
	x.Env = append(x.Env, "AGENTREE_TEMPORAL=server", "AGENTREE_DATA="+c.dir,
		"AGENTREE_PG_PORT="+strconv.Itoa(c.clientPGPort()), "AGENTREE_TEMPORAL_PORT="+strconv.Itoa(port))
	var stderr bytes.Buffer
	x.Stderr = &stderr
	out, err := x.Output()
	if err != nil {
		return "", fmt.Errorf("chaos: services.sh %s: %w\n%s", cmd, err, stderr.Bytes())
	}
	return string(out), nil
}

// temporalServerProc sets up the server's databases and configuration
// and returns the server's process, its frontend on port.
func (c *cluster) temporalServerProc(ctx context.Context, port int) (*proc, error) {
	out, err := c.services(ctx, port, "temporal-server-prepare")
	if err != nil {
		return nil, err
	}
	if c.cfg.Failover {
		if err := c.failoverTemporalConfig(); err != nil {
			return nil, err
		}
	}
	args := strings.Split(strings.TrimSpace(out), "\n")
	return &proc{
		name: "temporal", path: args[0], args: args[1:],
		logPath:      filepath.Join(c.dir, "temporal.log"),
		restartDelay: c.cfg.TemporalDown,
	}, nil
}
