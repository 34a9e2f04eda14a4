package main

import (
	"os"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/workerconfig"
)

// loadWorkerConfig loads the worker configuration (--config, else
// $AGENTREE_CONFIG, else the defaults) and applies the task-queue and
// namespace flags over it when they were given.
func loadWorkerConfig(path, queue, namespace string) (workerconfig.Config, error) {
	cfg, err := workerconfig.Load(workerconfig.Path(path))
	if err != nil {
		return cfg, err
	}
	if queue != "" {
		cfg.TaskQueue = queue
	}
	if namespace != "" {
		cfg.Namespace = namespace
	}
	return cfg, nil
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

// names lists what a worker built from w serves, for logs and the dev
// gateway's checks.
func names(w workerconfig.Worker) (kinds, providers, tools []string) {
	for _, a := range w.Agents {
		kinds = append(kinds, a.Kind())
	}
	seen := map[string]bool{}
	for _, p := range w.Providers {
		if !seen[p.Name()] {
			seen[p.Name()] = true
			providers = append(providers, p.Name())
		}
	}
	for _, t := range w.Tools {
		tools = append(tools, t.Name)
	}
	return kinds, providers, tools
}
