package main

import (
	"os"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// registry is what this binary's worker runs: the react agent, the
// research sample's tools, the scripted model, and each real provider
// whose API key is in the environment.
type registry struct {
	agents    []agentsdk.Agent
	providers []agentsdk.Provider
	tools     []*agentsdk.Tool
}

func newRegistry() (registry, error) {
	r := registry{
		agents:    []agentsdk.Agent{react.New(react.Options{})},
		providers: []agentsdk.Provider{scripted.New(demo.Script())},
		tools:     demo.Tools(),
	}
	if os.Getenv("ANTHROPIC_API_KEY") != "" {
		p, err := anthropic.New(anthropic.Options{})
		if err != nil {
			return r, err
		}
		r.providers = append(r.providers, p)
	}
	if os.Getenv("OPENAI_API_KEY") != "" {
		p, err := openai.New(openai.Options{})
		if err != nil {
			return r, err
		}
		r.providers = append(r.providers, p)
	}
	return r, nil
}

// demoModel is the model the demo uses: a real provider when its key is
// set (Anthropic first), else the scripted one.
func demoModel() agentsdk.ModelRef {
	switch {
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		return agentsdk.ModelRef{Provider: "anthropic", ModelID: envOr("AGENTREE_ANTHROPIC_MODEL", "claude-sonnet-4-5")}
	case os.Getenv("OPENAI_API_KEY") != "":
		return agentsdk.ModelRef{Provider: "openai", ModelID: envOr("AGENTREE_OPENAI_MODEL", "gpt-4.1-mini")}
	}
	return scripted.Model("")
}

func (r registry) names() (kinds, providers, tools []string) {
	for _, a := range r.agents {
		kinds = append(kinds, a.Kind())
	}
	for _, p := range r.providers {
		providers = append(providers, p.Name())
	}
	for _, t := range r.tools {
		tools = append(tools, t.Name)
	}
	return kinds, providers, tools
}
