package entrystore_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/migrations"
)

// TestStoreFollowsTheWritableHost: a DSN naming two servers with
// target_session_attrs=read-write is how a client follows a Postgres
// failover (tools/chaos -failover). With the first server down and the
// live one second, every way the product connects reaches the live one:
// the migrations (their own connection, tern's advisory lock), the
// store's pool (PoolConfig, still reading pool_max_conns), a dedicated
// LISTEN connection copied from the pool's configuration (the gateway's
// stream hub), and TryExclusive's advisory lock (the reconciler).
func TestStoreFollowsTheWritableHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dsn := downHostFirst(t, pgtest.URL(t))
	require.NoError(t, migrations.ApplyURL(ctx, dsn))

	cfg, err := entrystore.PoolConfig(dsn + "&pool_max_conns=3")
	require.NoError(t, err)
	require.Equal(t, int32(3), cfg.MaxConns)
	require.Len(t, cfg.ConnConfig.Fallbacks, 1, "the second server is a fallback")
	require.NotNil(t, cfg.ConnConfig.ValidateConnect, "target_session_attrs is kept")
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	es := entrystore.New(pool)
	o, err := es.EnsureOrg(ctx, "multihost")
	require.NoError(t, err)
	require.NotEmpty(t, o.ID)
	ran, err := es.TryExclusive(ctx, "multihost", func(context.Context) error { return nil })
	require.NoError(t, err)
	require.True(t, ran)

	listener, err := pgx.ConnectConfig(ctx, es.Pool().Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer listener.Close(context.WithoutCancel(ctx))
	require.NoError(t, entrystore.ListenStream(ctx, listener))
	channel, err := entrystore.NotifyChannel(ctx, listener)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `SELECT pg_notify($1, 'e:1')`, channel)
	require.NoError(t, err)
	n, err := listener.WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, "e:1", n.Payload)
}

// downHostFirst puts a server that is down (a port no one listens on)
// before the host of dsn and asks for a server that accepts writes.
func downHostFirst(t *testing.T, dsn string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := l.Addr().String()
	require.NoError(t, l.Close())
	u, err := url.Parse(dsn)
	require.NoError(t, err, "the test needs DATABASE_URL in URL form")
	u.Host = down + "," + u.Host
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	return u.String()
}
