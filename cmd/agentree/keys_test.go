package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestKeysCommands: the operator's key lifecycle — create with roles and
// an expiry (the secret printed once, on stdout), list (prefix, roles,
// expiry; never the secret), expire, revoke — and a refused key after.
func TestKeysCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()

	secret, info, err := cli(ctx, "keys", "create", "--org", "acme", "--name", "ci", "--role", "run", "--role", "read", "--expires-in", "720h")
	require.NoError(t, err)
	secret = strings.TrimSpace(secret)
	require.True(t, entrystore.WellFormedAPIKey(secret), secret)
	require.Contains(t, info, "with roles run, read")
	id := regexp.MustCompile(`\(([0-9a-f-]{36})\)`).FindStringSubmatch(info)
	require.Len(t, id, 2, info)

	out, _, err := cli(ctx, "keys", "list", "--org", "acme")
	require.NoError(t, err)
	require.Regexp(t, id[1]+`\s+`+secret[4:12]+`\s+ci\s+run,read\s+\S+\s+-\s+\d{4}-\S+\s+-`, out)
	require.NotContains(t, out, secret)

	_, info, err = cli(ctx, "keys", "expire", "--org", "acme", id[1], "--at", "2099-01-01T00:00:00Z")
	require.NoError(t, err)
	require.NotContains(t, info, "2099", "expire never extends a key's life")
	_, info, err = cli(ctx, "keys", "revoke", "--org", "acme", id[1])
	require.NoError(t, err)
	require.Contains(t, info, "revoked key "+secret[4:12])
	out, _, err = cli(ctx, "keys", "list", "--org", "acme")
	require.NoError(t, err)
	require.Regexp(t, `\d{4}-\S+Z\s*\n$`, out, "the revocation time is listed")

	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	_, _, err = entrystore.New(pool).AuthenticateAPIKey(ctx, secret)
	require.ErrorIs(t, err, entrystore.ErrNotFound)

	_, _, err = cli(ctx, "keys", "create", "--org", "acme", "--role", "root")
	require.ErrorContains(t, err, `unknown role "root"`)
}
