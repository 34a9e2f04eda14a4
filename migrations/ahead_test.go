package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/migrations"
)

// TestApplyLeavesANewerSchemaAlone: a schema a newer build migrated past
// this build's newest migration is up to date, so an older worker (rolled
// back, or restarted mid-deploy) starts on it instead of failing, and its
// version stays the newer build's.
func TestApplyLeavesANewerSchemaAlone(t *testing.T) {
	ctx := context.Background()
	conn := schemaConn(t)
	require.NoError(t, migrations.Apply(ctx, conn))
	ours, err := migrations.Version(ctx, conn)
	require.NoError(t, err)
	// What a newer build's migration leaves behind: one more version.
	_, err = conn.Exec(ctx, `UPDATE `+migrations.VersionTable+` SET version = version + 1`)
	require.NoError(t, err)

	require.NoError(t, migrations.Apply(ctx, conn), "an older build on a newer schema")
	got, err := migrations.Version(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, ours+1, got, "the newer build's version is kept")
}
