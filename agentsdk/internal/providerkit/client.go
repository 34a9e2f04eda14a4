package providerkit

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/agentree/agentree/agentsdk"
)

// Cache holds one value per key — an SDK client per endpoint and key —
// built on first use. The zero value is empty and ready; a Cache is safe
// for concurrent use.
type Cache[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// Get returns key's value, calling build for it the first time. build
// runs under the cache's lock, so concurrent first uses build once. A
// failed build is not kept: the next Get tries again, since what it read
// (the environment) may have been fixed.
func (c *Cache[T]) Get(key string, build func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		var zero T
		return zero, err
	}
	if c.m == nil {
		c.m = map[string]T{}
	}
	c.m[key] = v
	return v, nil
}

// ClientKey is the Cache key for ref: the endpoint and key environment
// variable a request may override, and so what one SDK client serves.
// Both are quoted, so no two pairs share a key.
func ClientKey(ref agentsdk.ModelRef) string {
	return strconv.Quote(ref.BaseURL) + strconv.Quote(ref.APIKeyEnv)
}

// APIKey resolves a request's key from a provider's options (key, and env
// naming the variable to read when key is "") and the request's own
// callEnv, which overrides both. It returns the key, "" when the variable
// is empty, and the variable's name for the error that follows.
func APIKey(key, env, callEnv string) (string, string) {
	if callEnv != "" {
		key, env = "", callEnv
	}
	if key == "" {
		key = os.Getenv(env)
	}
	return key, env
}

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
