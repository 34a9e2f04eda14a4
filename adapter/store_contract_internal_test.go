package adapter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/storetest"
)

// TestStoreContract runs the store contract against the Postgres store and
// against the worker store (an execution in persistenceMode local,
// whose conversation lives in the worker's SQLite file).
func TestStoreContract(t *testing.T) {
	es := entrystore.New(pgtest.New(t))
	ctx := context.Background()
	org, err := es.CreateOrg(ctx, "contract", "Contract")
	require.NoError(t, err)
	fixture := func(t *testing.T, mode string) (storetest.Fixture, *entrystore.Store) {
		cfg := agentsdk.Config{SystemPrompt: "You check contracts.", MaxTurns: 7, PersistenceMode: mode}
		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind, Config: raw})
		require.NoError(t, err)
		return storetest.Fixture{OrgID: org.ID, ExecutionID: ex.ID, Config: cfg}, es
	}
	t.Run("postgres", func(t *testing.T) {
		storetest.Contract(t, func(t *testing.T) storetest.Fixture {
			f, es := fixture(t, agentsdk.PersistenceRemote)
			f.Store = pgStore{es: es}
			return f
		})
	})
	t.Run("worker-held", func(t *testing.T) {
		storetest.Contract(t, func(t *testing.T) storetest.Fixture {
			f, es := fixture(t, agentsdk.PersistenceWorkerHeld)
			file, err := workerstore.Open(t.TempDir(), "w1")
			require.NoError(t, err)
			t.Cleanup(func() { _ = file.Close() })
			f.Store = newHeldAware(pgStore{es: es}, file)
			return f
		})
	})
}
