package workerconfig

import (
	"fmt"
	"os"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// RemoteAgent is a remote A2A agent the worker's agents may give a task to
// as a sub-agent (spawn_agents' agents[].remote names it; a request never
// gives its address). Its token comes from the worker's environment, named.
type RemoteAgent struct {
	// Name is what spawn_agents names; letters, digits, '-' and '_', at
	// most 64; required, unique.
	Name string `yaml:"name"`
	// Description tells models what the agent is for.
	Description string `yaml:"description"`
	// URL is the agent card's address (ending in .json) or the agent's
	// base URL (its card at /.well-known/agent-card.json); required.
	URL string `yaml:"url"`
	// TokenEnv names the environment variable holding the credential,
	// read once at start; a worker whose variable is empty does not
	// start. Omitted: no credential is sent.
	TokenEnv string `yaml:"tokenEnv"`
	// Header carries the token; default Authorization (as "Bearer <token>").
	Header string `yaml:"header"`
	// Timeout bounds a whole remote task; default 1h.
	Timeout time.Duration `yaml:"timeout"`
	// RequestTimeout bounds one request to the agent; default 30s.
	RequestTimeout time.Duration `yaml:"requestTimeout"`
	// PollInterval is how often a working task's state is read; default 1s.
	PollInterval time.Duration `yaml:"pollInterval"`
}

// sdk is the agent as the plugin takes it, without its token.
func (r RemoteAgent) sdk() agentsdk.RemoteAgent {
	return agentsdk.RemoteAgent{Name: r.Name, Description: r.Description, URL: r.URL, Header: r.Header,
		Timeout: r.Timeout, RequestTimeout: r.RequestTimeout, PollInterval: r.PollInterval}
}

// withRemoteDefaults fills in the remote agents' defaults and says what is
// wrong with them.
func withRemoteDefaults(remotes []RemoteAgent, bad func(string, ...any)) []RemoteAgent {
	if len(remotes) == 0 {
		return nil
	}
	names := map[string]bool{}
	for i := range remotes {
		r := &remotes[i]
		field := fmt.Sprintf("remoteAgents[%d]", i)
		d := r.sdk().WithDefaults()
		r.Header, r.Timeout, r.RequestTimeout, r.PollInterval = d.Header, d.Timeout, d.RequestTimeout, d.PollInterval
		if err := d.Check(); err != nil {
			bad("%s: %v", field, err)
		}
		if names[r.Name] {
			bad("%s.name: %q is used by an earlier remote agent", field, r.Name)
		}
		names[r.Name] = true
	}
	return remotes
}

// remoteAgents are the configured remote agents with their tokens, read
// from their variables now: a missing one stops the worker at start
// rather than failing sub-agents later.
func remoteAgents(remotes []RemoteAgent) ([]agentsdk.RemoteAgent, error) {
	var out []agentsdk.RemoteAgent
	for i, r := range remotes {
		a := r.sdk()
		if r.TokenEnv != "" {
			if a.Token = os.Getenv(r.TokenEnv); a.Token == "" {
				return nil, fmt.Errorf("worker config: remoteAgents[%d] (%s): %s is not set", i, r.Name, r.TokenEnv)
			}
		}
		out = append(out, a)
	}
	return out, nil
}
