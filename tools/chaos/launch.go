package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/scripted"
	research "github.com/agentree/agentree/agentsdk/tools/demo"
)

// This file is the only one that knows how Agentree's processes are
// started (their command lines and environment): when the CLI or the
// worker's configuration changes, this is what to adapt.

// agentreeEnv is what every agentree process needs.
func (c *cluster) agentreeEnv() []string {
	return []string{"DATABASE_URL=" + c.dbURL, "TEMPORAL_ADDRESS=" + c.temporalAddr}
}

// workerProc is worker i: `agentree worker` on the cluster's task queue,
// its scripted model and tools slowed so faults find calls in flight, its
// model calls logged for the rerun check.
func (c *cluster) workerProc(i int) *proc {
	name := "worker-" + strconv.Itoa(i)
	env := append(c.agentreeEnv(), pgAppName(name),
		scripted.EnvDelay+"="+c.cfg.ModelDelay.String(),
		scripted.EnvTokenDelay+"="+c.cfg.TokenDelay.String(),
		scripted.EnvCallLog+"="+c.callLog(),
		research.EnvToolDelay+"="+c.cfg.ToolDelay.String(),
	)
	env = append(env, c.resourceWorkerEnv()...) // resources.go
	args := []string{"worker", "--task-queue", c.queue}
	switch {
	case c.cfg.Soak:
		args = append(args, "--config", c.soakWorkerConfig(i))
	case c.cfg.ActivityToolCalls || c.cfg.ActivityModelCalls:
		args = append(args, "--config", c.workerConfig())
	}
	return &proc{
		name: name, path: c.bin, args: args,
		env: env, logPath: filepath.Join(c.dir, name+".log"), restartDelay: c.cfg.RestartDelay,
	}
}

// pgAppName names a process's Postgres connections (pgx reads PGAPPNAME)
// so pg_stat_activity tells them apart: chaos-worker-0, chaos-gateway.
func pgAppName(process string) string { return "PGAPPNAME=chaos-" + process }

// workerConfig is the workers' configuration file with
// -activity-tool-calls or -activity-model-calls (writeWorkerConfig writes
// it).
func (c *cluster) workerConfig() string { return filepath.Join(c.dir, "worker.yaml") }

// writeWorkerConfig writes workerConfig: the defaults, with model calls
// or tool calls as activities.
func (c *cluster) writeWorkerConfig() error {
	yaml := fmt.Sprintf("localActivities:\n  modelCalls: %v\n  toolCalls: %v\n", !c.cfg.ActivityModelCalls, !c.cfg.ActivityToolCalls)
	if err := os.WriteFile(c.workerConfig(), []byte(yaml), 0o644); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

// gatewayProc is `agentree gateway` on the cluster's HTTP port.
func (c *cluster) gatewayProc() *proc {
	return &proc{
		name: "gateway", path: c.bin,
		args: append([]string{"gateway", "--addr", c.gatewayAddr, "--task-queue", c.queue, "--heartbeat", "2s"}, c.soakGatewayArgs()...),
		env:  append(c.agentreeEnv(), pgAppName("gateway")), logPath: filepath.Join(c.dir, "gateway.log"), restartDelay: c.cfg.RestartDelay,
	}
}

// temporalProc is the cluster's own Temporal dev server, with the dynamic
// configuration scripts/services.sh gives the shared one; its SQLite file
// keeps its state across restarts.
func (c *cluster) temporalProc(port, uiPort, httpPort int) *proc {
	return &proc{
		name: "temporal", path: c.cfg.TemporalBin,
		args: append([]string{"server", "start-dev",
			"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
			"--http-port", strconv.Itoa(httpPort), "--headless",
			"--db-filename", filepath.Join(c.dir, "temporal.db"), "--log-level", "warn",
			"--dynamic-config-value", "system.enableActivityEagerExecution=true",
			"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
			"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
			"--dynamic-config-value", `history.workflowIdReuseMinimalInterval="0s"`,
		}, searchAttributeFlags()...),
		logPath: filepath.Join(c.dir, "temporal.log"),
		// A killed dev server stays down this long before its supervisor
		// starts it again.
		restartDelay: c.cfg.TemporalDown,
	}
}

// searchAttributeFlags register the search attributes every agent
// workflow carries as the dev server starts.
func searchAttributeFlags() []string {
	var flags []string
	for _, name := range aclient.SearchAttributeNames {
		flags = append(flags, "--search-attribute", name+"=Keyword")
	}
	return flags
}

// postgresConf is appended to the private cluster's postgresql.conf.
// synchronous_commit stays on, as in production: with it off, a crash
// loses commits that Temporal already holds references to (an entry a
// completed activity returned), which no engine can recover.
func postgresConf(port int, sockDir string) string {
	return fmt.Sprintf(`listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
max_connections = 200
shared_buffers = 64MB
fsync = on
synchronous_commit = on
`, port, sockDir)
}

// pgStopTimeout bounds pg_ctl's waits.
const pgStopTimeout = 60 * time.Second
