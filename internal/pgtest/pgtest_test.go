package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/migrations"
)

func TestNewIsolatesSchemas(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.New(t), pgtest.New(t)
	var sa, sb string
	require.NoError(t, a.QueryRow(ctx, "SELECT current_schema()").Scan(&sa))
	require.NoError(t, b.QueryRow(ctx, "SELECT current_schema()").Scan(&sb))
	require.NotEqual(t, sa, sb)
	require.Regexp(t, `^t_[0-9a-f]{16}$`, sa)

	_, err := a.Exec(ctx, "INSERT INTO organization (slug) VALUES ('only-in-a')")
	require.NoError(t, err)
	var n int
	require.NoError(t, b.QueryRow(ctx, "SELECT count(*) FROM organization WHERE slug = 'only-in-a'").Scan(&n))
	require.Zero(t, n)
}

func TestMigrationsAppliedTwiceChangeNothing(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)

	before, err := migrations.Version(ctx, conn)
	require.NoError(t, err)
	require.Positive(t, before)
	tables := func() int {
		var n int
		require.NoError(t, conn.QueryRow(ctx,
			"SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&n))
		return n
	}
	tablesBefore := tables()

	require.NoError(t, migrations.Apply(ctx, conn))
	after, err := migrations.Version(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Equal(t, tablesBefore, tables())

	var orgs int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM organization WHERE slug = '_system'").Scan(&orgs))
	require.Equal(t, 1, orgs)
}

func TestSchemaDroppedAfterTest(t *testing.T) {
	var schema string
	t.Run("inner", func(t *testing.T) {
		pool := pgtest.New(t)
		require.NoError(t, pool.QueryRow(context.Background(), "SELECT current_schema()").Scan(&schema))
	})
	base := pgtest.New(t)
	var n int
	require.NoError(t, base.QueryRow(context.Background(),
		"SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n))
	require.Zero(t, n)
}

func TestEmptyURLIsAnUnmigratedSchemaOfItsOwn(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.EmptyURL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var schema string
	var tables int
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema))
	require.Regexp(t, `^t_[0-9a-f]{16}$`, schema)
	require.NoError(t, conn.QueryRow(ctx,
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&tables))
	require.Zero(t, tables, "no migration applied")

	require.NoError(t, migrations.Apply(ctx, conn))
	v, err := migrations.Version(ctx, conn)
	require.NoError(t, err)
	require.Positive(t, v)
}
