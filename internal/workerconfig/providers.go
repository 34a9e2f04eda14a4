package workerconfig

import (
	"slices"

	"github.com/agentree/agentree/agentsdk"
	// The providers a worker configuration can name, each registering
	// its agentsdk.ProviderKind: a new provider is one more import here.
	_ "github.com/agentree/agentree/agentsdk/anthropic"
	_ "github.com/agentree/agentree/agentsdk/openai"
)

// providerNames are the provider kinds an endpoint may have: every
// registered kind, and the demo's scripted model.
func providerNames() []string {
	var names []string
	for _, k := range agentsdk.ProviderKinds() {
		names = append(names, k.Name)
	}
	return append(names, ProviderScripted)
}

// isProvider says whether name is one of providerNames.
func isProvider(name string) bool { return slices.Contains(providerNames(), name) }
