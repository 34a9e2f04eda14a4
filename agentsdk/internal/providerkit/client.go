package providerkit

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// MissingKey is the error for a required key that env does not hold.
func MissingKey(env string) error {
	return fmt.Errorf("%w: no API key: $%s is empty", agentsdk.ErrInvalidInput, env)
}

// ParseBaseURL parses an API's base URL, which must be an absolute http(s)
// URL; anything else is an agentsdk.ErrInvalidInput error.
func ParseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an http(s) URL", agentsdk.ErrInvalidInput, s)
	}
	return u, nil
}

// CheckName checks a provider name: ModelRef.Key joins it to a model ID
// with '/', and names show in logs and metrics, so it holds neither '/'
// nor a space.
func CheckName(name string) error {
	if strings.ContainsAny(name, "/ ") {
		return fmt.Errorf("%w: name %q holds '/' or a space", agentsdk.ErrInvalidInput, name)
	}
	return nil
}

// Key is the API key an endpoint sends, and the variable it came from.
// An explicit key wins; else the variable env names is read; with no env,
// defaultEnv (the provider's own, e.g. ANTHROPIC_API_KEY) is read only
// when official, i.e. the endpoint is the provider's own API: a custom
// base URL never receives the provider's key unless the operator names
// its variable. missing is the error every call returns when the official
// API has no key (it refuses every call without one); another server may
// take none.
func Key(key, env, defaultEnv string, official bool) (value, usedEnv string, missing error) {
	if env == "" && official {
		env = defaultEnv
	}
	if key == "" && env != "" {
		key = os.Getenv(env)
	}
	if key == "" && official {
		missing = MissingKey(env)
	}
	return key, env, missing
}
