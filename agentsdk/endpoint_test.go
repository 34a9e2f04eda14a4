package agentsdk_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// at is a provider that serves one named endpoint and says which it is.
type at struct{ info agentsdk.EndpointInfo }

func (a at) Name() string                    { return a.info.Provider }
func (a at) Endpoint() agentsdk.EndpointInfo { return a.info }
func (a at) Stream(context.Context, agentsdk.ModelRequest, agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	return agentsdk.ModelResponse{}, nil
}

func TestEndpointsResolve(t *testing.T) {
	cloud := at{agentsdk.EndpointInfo{Name: "openai", Provider: "openai", Models: []string{"*"}}}
	local := at{agentsdk.EndpointInfo{Name: "local-vllm", Provider: "openai", Models: []string{"qwen3", "llama3.2"}}}
	ant := at{agentsdk.EndpointInfo{Name: "anthropic", Provider: "anthropic", Models: []string{"claude-sonnet-4-5"}}}
	eps, err := agentsdk.NewEndpoints(cloud, local, ant)
	require.NoError(t, err)
	require.Equal(t, []agentsdk.EndpointInfo{cloud.info, local.info, ant.info}, eps.Infos())

	for name, c := range map[string]struct {
		ref  agentsdk.ModelRef
		want agentsdk.Provider
	}{
		"no endpoint: the provider's first": {agentsdk.ModelRef{Provider: "openai", ModelID: "qwen3"}, cloud},
		"named endpoint":                    {agentsdk.ModelRef{Provider: "openai", ModelID: "qwen3", Endpoint: "local-vllm"}, local},
		"allowed model":                     {agentsdk.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}, ant},
	} {
		got, err := eps.Resolve(c.ref)
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}

	for name, c := range map[string]struct {
		ref  agentsdk.ModelRef
		want string
	}{
		"unknown provider":     {agentsdk.ModelRef{Provider: "gemini", ModelID: "x"}, `unknown model provider "gemini" (known: openai, anthropic)`},
		"unknown endpoint":     {agentsdk.ModelRef{Provider: "openai", ModelID: "x", Endpoint: "elsewhere"}, `provider "openai" has no endpoint "elsewhere" (endpoints: openai, local-vllm)`},
		"endpoint of another":  {agentsdk.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5", Endpoint: "local-vllm"}, `provider "anthropic" has no endpoint "local-vllm" (endpoints: anthropic)`},
		"model not allowed":    {agentsdk.ModelRef{Provider: "openai", ModelID: "gpt-5", Endpoint: "local-vllm"}, `endpoint "local-vllm" does not serve model "gpt-5" (models: qwen3, llama3.2)`},
		"default not allowing": {agentsdk.ModelRef{Provider: "anthropic", ModelID: "claude-opus-4"}, `endpoint "anthropic" does not serve model "claude-opus-4"`},
	} {
		_, err := eps.Resolve(c.ref)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, name)
		require.ErrorContains(t, err, c.want, name)
	}
}

func TestNewEndpointsRefusesDuplicateNames(t *testing.T) {
	a := at{agentsdk.EndpointInfo{Name: "x", Provider: "openai", Models: []string{"*"}}}
	b := at{agentsdk.EndpointInfo{Name: "x", Provider: "anthropic", Models: []string{"*"}}}
	_, err := agentsdk.NewEndpoints(a, b)
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	require.ErrorContains(t, err, `endpoint "x" is declared twice`)
}

func TestDescribeDefaultsToTheProviderName(t *testing.T) {
	require.Equal(t, agentsdk.EndpointInfo{Name: "scripted", Provider: "scripted", Models: []string{"*"}},
		agentsdk.Describe(namedProvider("scripted")))
}
