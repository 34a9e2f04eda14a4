package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/agentree/agentree/entrystore"
)

// keysCmd manages organization API keys: `keys create --org SLUG` creates
// the organization if it is missing and prints a new key, once.
func keysCmd() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Manage organization API keys", Args: cobra.NoArgs}
	var org, name string
	create := &cobra.Command{
		Use:     "create --org SLUG [--name NAME]",
		Short:   "Create an API key (and the organization if missing); the key is printed once",
		Example: "  agentree keys create --org acme --name ci",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			es, closeStore, err := storeFromEnv(ctx, "keys create")
			if err != nil {
				return err
			}
			defer closeStore()
			o, err := es.EnsureOrg(ctx, org)
			if err != nil {
				return fmt.Errorf("keys create: %w", err)
			}
			secret, k, err := es.CreateAPIKey(ctx, o.ID, name)
			if err != nil {
				return fmt.Errorf("keys create: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "created key %s for organization %s (%s); it is shown only now:\n", k.Prefix, o.Slug, o.ID)
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			return nil
		},
	}
	create.Flags().StringVar(&org, "org", "", "the organization's slug (created if missing)")
	create.Flags().StringVar(&name, "name", "", "a name to tell the key apart")
	_ = create.MarkFlagRequired("org")
	keys.AddCommand(create)
	return keys
}

// storeFromEnv opens the store DATABASE_URL names, for the command what.
func storeFromEnv(ctx context.Context, what string) (*entrystore.Store, func(), error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return nil, nil, fmt.Errorf("%s: DATABASE_URL is not set (eval \"$(make -s env)\")", what)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return entrystore.New(pool), pool.Close, nil
}
