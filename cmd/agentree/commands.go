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
  gateway   serve the REST/SSE (and gRPC) API (agentree gateway -h)
  keys      create an organization API key: keys create --org SLUG
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
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
