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
)

// TestWorkerHeldModesStayBounded: a worker with its own store remembers each
// execution's persistence mode, but no more than maxModes of them: past
// that it starts over, and every answer stays right.
func TestWorkerHeldModesStayBounded(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "modes", "Modes")
	require.NoError(t, err)
	file, err := workerstore.Open(t.TempDir(), "w1")
	require.NoError(t, err)
	s := newHeldAware(pgStore{es: es}, file)
	s.maxModes = 3

	want := map[string]bool{}
	for i := range 10 {
		cfg := agentsdk.Config{}
		if i%2 == 0 {
			cfg.PersistenceMode = agentsdk.PersistenceWorkerHeld
		}
		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind, Config: raw})
		require.NoError(t, err)
		want[ex.ID] = i%2 == 0
	}
	for range 2 {
		for id, local := range want {
			got, err := s.isHeld(ctx, org.ID, id)
			require.NoError(t, err)
			require.Equal(t, local, got, id)
			require.LessOrEqual(t, len(s.modes), 3)
		}
	}
}
