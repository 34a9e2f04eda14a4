package openai

import "github.com/agentree/agentree/agentsdk"

// Kind is the OpenAI Chat Completions API (and any server compatible with
// it) as a provider kind the worker configuration builds endpoints of
// (registered at init).
var Kind = agentsdk.ProviderKind{
	Name: "openai", KeyEnv: "OPENAI_API_KEY", DemoModel: "gpt-4.1-mini",
	New: func(o agentsdk.EndpointOptions) (agentsdk.PricedProvider, error) {
		return New(Options{Endpoint: o.Endpoint, Models: o.Models, BaseURL: o.BaseURL,
			APIKey: o.APIKey, APIKeyEnv: o.APIKeyEnv, Prices: o.Prices})
	},
}

func init() { agentsdk.RegisterProviderKind(Kind) }
