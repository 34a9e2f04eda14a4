package main

import (
	"os"
	"strings"

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

// demoModel is the model the demo uses: the first registered provider
// whose key is set (anthropic before openai), its DemoModel unless
// AGENTREE_<PROVIDER>_MODEL names another; else the scripted one.
func demoModel() agentsdk.ModelRef {
	for _, k := range agentsdk.ProviderKinds() {
		if os.Getenv(k.KeyEnv) != "" {
			return agentsdk.ModelRef{Provider: k.Name, ModelID: envOr("AGENTREE_"+strings.ToUpper(k.Name)+"_MODEL", k.DemoModel)}
		}
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
