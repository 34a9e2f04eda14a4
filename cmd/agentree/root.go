package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/migrations"
)

// exitInterrupted is the exit status after Ctrl-C (128 + SIGINT), as shells
// report it.
const exitInterrupted = 130

// interruptedError is what a client command returns when Ctrl-C stopped
// it; the text says what became of the execution.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }

func exitCode(err error) int {
	var ie *interruptedError
	if errors.As(err, &ie) {
		return exitInterrupted
	}
	return 1
}

// newRootCmd builds the command tree. Each call builds a fresh tree, so
// tests can run commands side by side without shared flag state.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "agentree",
		Short: "Durable LLM agents on Temporal",
		Long: `agentree runs the Agentree services (migrate, worker, gateway, dev) and talks
to a running gateway over REST (run, send, ls, show, cancel, tools).

Client commands read --addr and --org from AGENTREE_ADDR and AGENTREE_ORG,
and the API key from AGENTREE_API_KEY or --key-file; ` + "`make run`" + ` keeps the dev
key in .data/dev-key.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddGroup(&cobra.Group{ID: "server", Title: "Services:"}, &cobra.Group{ID: "client", Title: "Client commands (over REST):"})
	for _, c := range []*cobra.Command{migrateCmd(), workerCmd(), gatewayCmd(), devCmd(), keysCmd(), pruneCmd()} {
		c.GroupID = "server"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{runCmd(), sendCmd(), decisionCmd(agentsdk.DecisionApprove), decisionCmd(agentsdk.DecisionReject), resumeCmd(), forkCmd(), timelineCmd(), listCmd(), showCmd(), cancelCmd(), toolsCmd(), quotaCmd()} {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	return root
}

// execute runs the command line args (without the program name), as main
// does; for tests.
func execute(ctx context.Context, args ...string) error {
	root := newRootCmd()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database migrations to $DATABASE_URL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url := os.Getenv("DATABASE_URL")
			if url == "" {
				return errors.New("migrate: DATABASE_URL is not set (eval \"$(make -s env)\")")
			}
			return migrations.ApplyURL(cmd.Context(), url)
		},
	}
}

// passthrough wraps a command whose flags its own function declares and
// parses with the standard flag package (worker, gateway, dev): cobra
// hands it the arguments untouched, and `-h` prints that flag set's
// defaults and exits 0.
func passthrough(use, short, long string, run func(context.Context, []string) error) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" || a == "-help" {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s\n\n", long)
					break
				}
			}
			err := run(cmd.Context(), args)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		},
	}
}

func workerCmd() *cobra.Command {
	return passthrough("worker [flags]", "Run a Temporal worker with the Agentree plugin",
		"Run a Temporal worker with the Agentree plugin until interrupted (env DATABASE_URL, TEMPORAL_ADDRESS).",
		runWorker)
}

func gatewayCmd() *cobra.Command {
	return passthrough("gateway [flags]", "Serve the REST/SSE (and gRPC) API",
		"Serve the REST/SSE API, /healthz and /openapi.json (and gRPC with --grpc-addr) (env DATABASE_URL, TEMPORAL_ADDRESS).",
		runGateway)
}

func devCmd() *cobra.Command {
	return passthrough("dev [flags]", "Worker and gateway in one process, with a dev API key",
		"Run a worker and the gateway in one process for local use, with an organization \"dev\" whose API key is kept in --key-file (env DATABASE_URL, TEMPORAL_ADDRESS).",
		runDev)
}

// temporalUIDefault is the Temporal UI address `make up` used: services.sh
// exports AGENTREE_TEMPORAL_UI for the dev server it started, and takes its
// port from AGENTREE_TEMPORAL_UI_PORT.
func temporalUIDefault() string {
	if ui := os.Getenv("AGENTREE_TEMPORAL_UI"); ui != "" {
		return ui
	}
	return "http://127.0.0.1:" + envOr("AGENTREE_TEMPORAL_UI_PORT", "8233")
}
