package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/agentree/agentree/entrystore"
)

// keysCmd manages organization API keys in the store (DATABASE_URL): the
// operator's way in, before any admin key exists. The same lifecycle is
// served over REST to admin keys (/api/orgs/{org}/api-keys). A key revoked
// or expired here is refused by a running gateway within its key cache's
// TTL (--key-cache-ttl, 5 s by default).
func keysCmd() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Manage organization API keys (create, list, revoke, expire)", Args: cobra.NoArgs}
	var org string
	keys.PersistentFlags().StringVar(&org, "org", "", "the organization's slug")
	_ = keys.MarkPersistentFlagRequired("org")

	var name string
	var roles []string
	var expiresIn time.Duration
	create := &cobra.Command{
		Use:     "create --org SLUG [--name NAME] [--role ROLE]... [--expires-in DURATION]",
		Short:   "Create an API key (and the organization if missing); the key is printed once",
		Example: "  agentree keys create --org acme --name ci --role run --role read --expires-in 720h",
		Args:    cobra.NoArgs,
		RunE: withStore("keys create", func(ctx context.Context, cmd *cobra.Command, es *entrystore.Store, _ []string) error {
			o, err := es.EnsureOrg(ctx, org)
			if err != nil {
				return err
			}
			nk := entrystore.NewAPIKey{Name: name, Roles: roles}
			if expiresIn > 0 {
				at := time.Now().Add(expiresIn)
				nk.ExpiresAt = &at
			}
			secret, k, err := es.MintAPIKey(ctx, o.ID, nk)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "created key %s (%s) for organization %s with roles %s; it is shown only now:\n",
				k.Prefix, k.ID, o.Slug, strings.Join(k.Roles, ", "))
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			return nil
		}),
	}
	create.Flags().StringVar(&name, "name", "", "a name to tell the key apart")
	create.Flags().StringArrayVar(&roles, "role", nil, "a role the key carries: admin, run, approve or read (repeat; default all four)")
	create.Flags().DurationVar(&expiresIn, "expires-in", 0, "the key expires this long from now (default never)")

	list := &cobra.Command{
		Use:   "list --org SLUG",
		Short: "List the organization's keys: prefix, roles, created, last used, expiry, revoked",
		Args:  cobra.NoArgs,
		RunE: withStore("keys list", func(ctx context.Context, cmd *cobra.Command, es *entrystore.Store, _ []string) error {
			o, err := es.GetOrgBySlug(ctx, org)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tROLES\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
			for p := (entrystore.Page{Limit: entrystore.MaxPageLimit}); ; {
				ks, next, err := es.ListAPIKeys(ctx, o.ID, p)
				if err != nil {
					return err
				}
				for _, k := range ks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, strings.Join(k.Roles, ","),
						stamp(&k.CreatedAt), stamp(k.LastUsedAt), stamp(k.ExpiresAt), stamp(k.RevokedAt))
				}
				if next == "" {
					break
				}
				p.Cursor = next
			}
			return tw.Flush()
		}),
	}

	revoke := &cobra.Command{
		Use:   "revoke --org SLUG KEY_ID",
		Short: "Revoke a key for good",
		Args:  cobra.ExactArgs(1),
		RunE: withStore("keys revoke", func(ctx context.Context, cmd *cobra.Command, es *entrystore.Store, args []string) error {
			o, err := es.GetOrgBySlug(ctx, org)
			if err != nil {
				return err
			}
			k, err := es.RevokeAPIKey(ctx, o.ID, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked key %s at %s\n", k.Prefix, stamp(k.RevokedAt))
			return nil
		}),
	}

	var at string
	expire := &cobra.Command{
		Use:   "expire --org SLUG KEY_ID [--at TIME]",
		Short: "Bring a key's expiry forward (to now by default; never later than it was)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore("keys expire", func(ctx context.Context, cmd *cobra.Command, es *entrystore.Store, args []string) error {
			var when time.Time
			if at != "" {
				var err error
				if when, err = time.Parse(time.RFC3339, at); err != nil {
					return fmt.Errorf("--at %q is not an RFC 3339 time (2006-01-02T15:04:05Z)", at)
				}
			}
			o, err := es.GetOrgBySlug(ctx, org)
			if err != nil {
				return err
			}
			k, err := es.ExpireAPIKey(ctx, o.ID, args[0], when)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "key %s expires at %s\n", k.Prefix, stamp(k.ExpiresAt))
			return nil
		}),
	}
	expire.Flags().StringVar(&at, "at", "", "when the key expires, RFC 3339 (default now)")

	keys.AddCommand(create, list, revoke, expire)
	return keys
}

// withStore runs f with the store DATABASE_URL names, its errors prefixed
// with the command what.
func withStore(what string, f func(context.Context, *cobra.Command, *entrystore.Store, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		es, closeStore, err := storeFromEnv(ctx, what)
		if err != nil {
			return err
		}
		defer closeStore()
		if err := f(ctx, cmd, es, args); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}

// stamp is an optional time for a table: UTC to the second, or "-".
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
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
