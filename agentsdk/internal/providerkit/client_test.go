package providerkit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

func TestMissingKey(t *testing.T) {
	err := providerkit.MissingKey("PK_TEST_EMPTY")
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	require.ErrorContains(t, err, "$PK_TEST_EMPTY is empty")
}

func TestParseBaseURL(t *testing.T) {
	for _, s := range []string{"https://api.anthropic.com", "http://localhost:11434/v1"} {
		u, err := providerkit.ParseBaseURL(s)
		require.NoError(t, err, s)
		require.Equal(t, s, u.String())
	}
	for _, s := range []string{"", "localhost:8080", "ftp://example.com", "http://", "https://exa mple.com", "/v1"} {
		_, err := providerkit.ParseBaseURL(s)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, s)
	}
}

func TestCheckName(t *testing.T) {
	require.NoError(t, providerkit.CheckName("ollama-local"))
	for _, name := range []string{"my/provider", "my provider"} {
		require.ErrorIs(t, providerkit.CheckName(name), agentsdk.ErrInvalidInput, name)
	}
}
