package agentsdk_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/openai"
)

// TestProviderKindsAreRegisteredOnce: each provider package registers
// its kind at init, in import-path order; a kind builds endpoints that
// describe themselves; a second registration of a name, or a kind with
// no constructor, panics; ProviderHint names a registered kind's key
// and nothing for other names.
func TestProviderKindsAreRegisteredOnce(t *testing.T) {
	var names []string
	for _, k := range agentsdk.ProviderKinds() {
		names = append(names, k.Name)
	}
	require.Equal(t, []string{"anthropic", "openai"}, names)
	k, ok := agentsdk.ProviderKindOf("openai")
	require.True(t, ok)
	require.Equal(t, openai.Kind.KeyEnv, k.KeyEnv)
	p, err := k.New(agentsdk.EndpointOptions{Endpoint: "local-vllm", Models: []string{"m1"}, BaseURL: "http://127.0.0.1:1/v1"})
	require.NoError(t, err)
	require.Equal(t, "local-vllm", p.Endpoint().Name)

	require.PanicsWithValue(t, `agentsdk: provider kind "anthropic" registered twice`, func() { agentsdk.RegisterProviderKind(anthropic.Kind) })
	require.Panics(t, func() { agentsdk.RegisterProviderKind(agentsdk.ProviderKind{Name: "x"}) })

	require.Equal(t, "; to serve it, start a worker with ANTHROPIC_API_KEY set (or an anthropic endpoint in its configuration)",
		agentsdk.ProviderHint("anthropic"))
	require.Empty(t, agentsdk.ProviderHint("antropic"))
}
