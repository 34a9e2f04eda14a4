package apiclient_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
)

// TestTerminalNamesAreTheEvents: the client ends a stream at exactly the
// events the runtime calls terminal (agentsdk/event), without linking it.
func TestTerminalNamesAreTheEvents(t *testing.T) {
	for _, name := range []string{event.NameStarted, event.NameResumed, event.NameWaiting, event.NameCheckpoint,
		event.NameCompleted, event.NameFailed, event.NameCancelled, event.NamePaused, event.NameToken, event.NameStreamError} {
		require.Equal(t, event.Terminal(name), apiclient.Terminal(name), name)
	}
	require.Equal(t, event.NameStreamError, apiclient.EventStreamError)
}
