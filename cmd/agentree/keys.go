package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentree/agentree/entrystore"
)

// runKeys manages organization API keys: `keys create --org SLUG` creates
// the organization if it is missing and prints a new key, once.
func runKeys(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: agentree keys create --org SLUG [--name NAME]")
	}
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	org := fs.String("org", "", "the organization's slug (created if missing)")
	name := fs.String("name", "", "a name to tell the key apart")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *org == "" {
		return errors.New("keys create: --org is required")
	}
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return errors.New("keys create: DATABASE_URL is not set (eval \"$(make -s env)\")")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	defer pool.Close()
	es := entrystore.New(pool)
	o, err := es.EnsureOrg(ctx, *org)
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	secret, k, err := es.CreateAPIKey(ctx, o.ID, *name)
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	fmt.Fprintf(os.Stderr, "created key %s for organization %s (%s); it is shown only now:\n", k.Prefix, o.Slug, o.ID)
	fmt.Println(secret)
	return nil
}
