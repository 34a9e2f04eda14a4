package providerkit_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

func TestCacheBuildsOncePerKey(t *testing.T) {
	var c providerkit.Cache[*int]
	builds := 0
	build := func(v int) func() (*int, error) {
		return func() (*int, error) { builds++; return &v, nil }
	}
	a1, err := c.Get("a", build(1))
	require.NoError(t, err)
	a2, err := c.Get("a", build(2))
	require.NoError(t, err)
	b, err := c.Get("b", build(3))
	require.NoError(t, err)

	require.Same(t, a1, a2)
	require.Equal(t, 1, *a2)
	require.Equal(t, 3, *b)
	require.Equal(t, 2, builds)
}

func TestCacheDoesNotKeepAFailedBuild(t *testing.T) {
	var c providerkit.Cache[string]
	boom := errors.New("no key yet")
	_, err := c.Get("k", func() (string, error) { return "ignored", boom })
	require.ErrorIs(t, err, boom)

	v, err := c.Get("k", func() (string, error) { return "client", nil })
	require.NoError(t, err)
	require.Equal(t, "client", v)
}

func TestCacheConcurrentFirstUsesBuildOnce(t *testing.T) {
	var c providerkit.Cache[*int]
	var builds atomic.Int32
	var wg sync.WaitGroup
	got := make([]*int, 16)
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = c.Get("k", func() (*int, error) { builds.Add(1); n := i; return &n, nil })
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, builds.Load())
	for i, v := range got {
		require.NoError(t, errs[i])
		require.Same(t, got[0], v)
	}
}

func TestClientKeyTellsEveryEndpointAndKeyApart(t *testing.T) {
	key := func(base, env string) string {
		return providerkit.ClientKey(agentsdk.ModelRef{Provider: "p", ModelID: "m", BaseURL: base, APIKeyEnv: env})
	}
	require.Equal(t, key("http://a", "K"), providerkit.ClientKey(agentsdk.ModelRef{ModelID: "other", BaseURL: "http://a", APIKeyEnv: "K"}),
		"the model does not pick the client")
	seen := map[string]bool{}
	for _, c := range [][2]string{{"", ""}, {"http://a", ""}, {"", "http://a"}, {"ab", "c"}, {"a", "bc"}, {`a"`, ""}, {"a", `"`}} {
		k := key(c[0], c[1])
		require.False(t, seen[k], "%q collides", c)
		seen[k] = true
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("PK_TEST_DEFAULT", "sk-default")
	t.Setenv("PK_TEST_OTHER", "sk-other")
	t.Setenv("PK_TEST_EMPTY", "")

	for name, c := range map[string]struct {
		key, env, callEnv string
		wantKey, wantEnv  string
	}{
		"configured key":            {"sk-given", "PK_TEST_DEFAULT", "", "sk-given", "PK_TEST_DEFAULT"},
		"configured variable":       {"", "PK_TEST_DEFAULT", "", "sk-default", "PK_TEST_DEFAULT"},
		"call's variable overrides": {"sk-given", "PK_TEST_DEFAULT", "PK_TEST_OTHER", "sk-other", "PK_TEST_OTHER"},
		"empty call's variable":     {"sk-given", "PK_TEST_DEFAULT", "PK_TEST_EMPTY", "", "PK_TEST_EMPTY"},
		"empty configured variable": {"", "PK_TEST_EMPTY", "", "", "PK_TEST_EMPTY"},
	} {
		key, env := providerkit.APIKey(c.key, c.env, c.callEnv)
		require.Equal(t, c.wantKey, key, name)
		require.Equal(t, c.wantEnv, env, name)
	}
	err := providerkit.MissingKey("PK_TEST_EMPTY")
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	require.ErrorContains(t, err, "$PK_TEST_EMPTY is empty")
}

func TestParseBaseURL(t *testing.T) {
	for _, s := range []string{"https://api.anthropic.com", "http://localhost:11434/v1"} {
		u, err := providerkit.ParseBaseURL(s)
		require.NoError(t, err, s)
		require.Equal(t, s, u.String())
	}
	for _, s := range []string{"", "localhost:8080", "ftp://example.com", "http://", "https://exa mple.com", "/v1"} {
		_, err := providerkit.ParseBaseURL(s)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, s)
	}
}

func TestCheckName(t *testing.T) {
	require.NoError(t, providerkit.CheckName("ollama-local"))
	for _, name := range []string{"my/provider", "my provider"} {
		require.ErrorIs(t, providerkit.CheckName(name), agentsdk.ErrInvalidInput, name)
	}
}
