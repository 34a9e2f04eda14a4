package agenttest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/storetest"
)

// TestStoreContract runs the store contract against the in-memory store,
// so what a unit test of an agent sees is what a worker's store does.
func TestStoreContract(t *testing.T) {
	storetest.Contract(t, func(t *testing.T) storetest.Fixture {
		cfg := agentsdk.Config{SystemPrompt: "You check contracts.", MaxTurns: 7}
		id := uuid.NewString()
		return storetest.Fixture{Store: newStore(cfg, id), OrgID: "org", ExecutionID: id, Config: cfg}
	})
}
