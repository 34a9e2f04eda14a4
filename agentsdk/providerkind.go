package agentsdk

import (
	"fmt"
	"slices"
	"sync"
)

// ProviderKind is a model API a worker can serve endpoints of from its
// configuration alone: its package registers it (RegisterProviderKind,
// from an init function), and the worker configuration builds endpoints
// of every kind registered. Adding a provider is its package and one
// blank import where the worker configuration lists them
// (internal/workerconfig/providers.go).
type ProviderKind struct {
	// Name is the provider's name in model references and in the worker
	// configuration: "anthropic".
	Name string
	// KeyEnv is the environment variable that holds the key of the
	// provider's own API: "ANTHROPIC_API_KEY".
	KeyEnv string
	// DemoModel is the model `agentree run` asks for when KeyEnv is set
	// (AGENTREE_<NAME>_MODEL overrides it).
	DemoModel string
	// New builds an endpoint of the provider.
	New func(EndpointOptions) (PricedProvider, error)
}

// EndpointOptions are what the worker configuration gives a provider
// kind to build one endpoint.
type EndpointOptions struct {
	// Endpoint names the endpoint; Models are the models it serves.
	Endpoint string
	Models   []string
	// BaseURL, when set, is where the API is (a proxy, a compatible
	// server); "" is the provider's own.
	BaseURL string
	// APIKey is the key; APIKeyEnv the variable it was read from, named
	// in errors (never the key).
	APIKey, APIKeyEnv string
	// Prices are the operator's prices by model, over the provider's
	// built-in table.
	Prices map[string]Price
}

// PricedProvider is a provider that describes its endpoint and knows
// which of its models it can price.
type PricedProvider interface {
	Provider
	EndpointDescriber
	PricedModels() []string
}

var providerKinds struct {
	sync.Mutex
	list []ProviderKind
}

// RegisterProviderKind makes k known; a second kind of the same name
// panics, as a second database/sql driver of one name does.
func RegisterProviderKind(k ProviderKind) {
	providerKinds.Lock()
	defer providerKinds.Unlock()
	if k.Name == "" || k.New == nil {
		panic("agentsdk: RegisterProviderKind: a kind needs a name and a constructor")
	}
	if slices.ContainsFunc(providerKinds.list, func(o ProviderKind) bool { return o.Name == k.Name }) {
		panic(fmt.Sprintf("agentsdk: provider kind %q registered twice", k.Name))
	}
	providerKinds.list = append(providerKinds.list, k)
}

// ProviderKinds are the kinds registered, in the order of registration
// (package initialization: by import path).
func ProviderKinds() []ProviderKind {
	providerKinds.Lock()
	defer providerKinds.Unlock()
	return slices.Clone(providerKinds.list)
}

// ProviderKindOf is the registered kind named name.
func ProviderKindOf(name string) (ProviderKind, bool) {
	for _, k := range ProviderKinds() {
		if k.Name == name {
			return k, true
		}
	}
	return ProviderKind{}, false
}
