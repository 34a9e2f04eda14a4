package entrystore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestPoolConfig: a pool holds at most DefaultPoolConns connections and
// keeps DefaultMinPoolConns open unless its database URL, in either form,
// says otherwise; a bad URL is an error.
func TestPoolConfig(t *testing.T) {
	for dsn, want := range map[string]int32{
		"postgres://u@localhost:5432/db?sslmode=disable":                  entrystore.DefaultPoolConns,
		"postgres://u@localhost:5432/db?sslmode=disable&pool_max_conns=3": 3,
		"postgresql://u@localhost/db?pool_max_conns=25":                   25,
		"host=localhost user=u dbname=db":                                 entrystore.DefaultPoolConns,
		"host=localhost user=u dbname=db pool_max_conns=7":                7,
	} {
		cfg, err := entrystore.PoolConfig(dsn)
		require.NoError(t, err, dsn)
		require.Equal(t, want, cfg.MaxConns, dsn)
	}
	// It keeps DefaultMinPoolConns open (never more than it may hold),
	// unless the URL says.
	for dsn, want := range map[string]int32{
		"postgres://u@localhost:5432/db":                   entrystore.DefaultMinPoolConns,
		"postgres://u@localhost:5432/db?pool_max_conns=2":  2,
		"postgres://u@localhost:5432/db?pool_min_conns=0":  0,
		"host=localhost user=u dbname=db pool_min_conns=1": 1,
	} {
		cfg, err := entrystore.PoolConfig(dsn)
		require.NoError(t, err, dsn)
		require.Equal(t, want, cfg.MinConns, dsn)
	}
	_, err := entrystore.PoolConfig("postgres://u@localhost:5432/db?pool_max_conns=many")
	require.Error(t, err)
}
