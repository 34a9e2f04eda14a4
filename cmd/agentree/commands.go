package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentree/agentree/migrations"
)

const usage = `usage: agentree <command> [flags]

commands:
  migrate   apply the database migrations to $DATABASE_URL
  worker    run a Temporal worker with the Agentree plugin
  gateway   serve the REST/SSE (and gRPC) API (agentree gateway -h)
  dev       worker and gateway in one process, with a dev API key
  keys      create an organization API key: keys create --org SLUG

client commands (over REST; --addr, --org, --key or AGENTREE_ADDR, AGENTREE_ORG, AGENTREE_API_KEY):
  run       start an execution and show it live: agentree run [--chat] "PROMPT"
  send      send a follow-up message: agentree send ID "MESSAGE"
  ls        list executions
  show      show an execution and its conversation
  cancel    cancel an execution
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "migrate":
		url := os.Getenv("DATABASE_URL")
		if url == "" {
			return errors.New("migrate: DATABASE_URL is not set (eval \"$(make -s env)\")")
		}
		return migrations.ApplyURL(ctx, url)
	case "gateway":
		return runGateway(ctx, args[1:])
	case "keys":
		return runKeys(ctx, args[1:])
	case "worker":
		return runWorker(ctx, args[1:])
	case "dev":
		return runDev(ctx, args[1:])
	case "run":
		return runRun(ctx, args[1:])
	case "send":
		return runSend(ctx, args[1:])
	case "ls":
		return runList(ctx, args[1:])
	case "show":
		return runShow(ctx, args[1:])
	case "cancel":
		return runCancel(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
