package anthropic

import "github.com/agentree/agentree/agentsdk"

// Kind is the Anthropic Messages API as a provider kind the worker
// configuration builds endpoints of (registered at init).
var Kind = agentsdk.ProviderKind{
	Name: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", DemoModel: "claude-sonnet-4-5",
	New: func(o agentsdk.EndpointOptions) (agentsdk.PricedProvider, error) {
		return New(Options{Endpoint: o.Endpoint, Models: o.Models, BaseURL: o.BaseURL,
			APIKey: o.APIKey, APIKeyEnv: o.APIKeyEnv, Prices: o.Prices})
	},
}

func init() { agentsdk.RegisterProviderKind(Kind) }
