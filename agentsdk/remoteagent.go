package agentsdk

import (
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// RemoteAgent is a remote A2A agent an operator lets the worker's agents
// call as a sub-agent (spawn_agents' agents[].remote names it). Like a
// model endpoint it is worker configuration: a request, a model or a
// tenant only ever names one, so no tenant makes the worker reach a host
// or send a secret the operator did not configure.
//
// NOTE: Experimental: the A2A client speaks the JSON-RPC binding of A2A
// 0.3 (the protocol of the official Go SDK the adapter uses).
type RemoteAgent struct {
	// Name is what spawn_agents names; unique per worker; letters,
	// digits, '-' and '_'.
	Name string
	// Description tells the model what the agent is for (listed in
	// spawn_agents' description).
	Description string
	// URL is the agent card's address (ending in .json) or the agent's
	// base URL, whose card is at /.well-known/agent-card.json.
	URL string
	// Header and Token are the credential sent with every request:
	// Header (default "Authorization") carries Token, as "Bearer <Token>"
	// when Header is Authorization. Empty Token: none is sent.
	Header, Token string
	// Timeout bounds the whole remote task; default 1 hour. A task that
	// outlasts it is cancelled and its sub-agent fails.
	Timeout time.Duration
	// RequestTimeout bounds one request to the agent; default 30 seconds.
	RequestTimeout time.Duration
	// PollInterval is how often the task's state is read while it works;
	// default 1 second.
	PollInterval time.Duration
}

// remoteName is what a remote agent's name may hold: it is written in
// tool arguments and shown to models.
var remoteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// WithDefaults returns r with its zero durations set to their defaults.
func (r RemoteAgent) WithDefaults() RemoteAgent {
	if r.Timeout == 0 {
		r.Timeout = time.Hour
	}
	if r.RequestTimeout == 0 {
		r.RequestTimeout = 30 * time.Second
	}
	if r.PollInterval == 0 {
		r.PollInterval = time.Second
	}
	if r.Header == "" {
		r.Header = "Authorization"
	}
	return r
}

// Check says what is wrong with r, or nil.
func (r RemoteAgent) Check() error {
	if !remoteName.MatchString(r.Name) {
		return fmt.Errorf("remote agent name %q: use 1 to 64 letters, digits, '-' or '_'", r.Name)
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("remote agent %s: url %q is not an http(s) URL", r.Name, r.URL)
	}
	if r.Timeout < 0 || r.RequestTimeout < 0 || r.PollInterval < 0 {
		return fmt.Errorf("remote agent %s: timeouts must not be negative", r.Name)
	}
	return nil
}
