package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTemporalOptionsFollowTemporalsEnvironmentConfiguration: a profile
// file gives address, namespace, API key and TLS; TEMPORAL_* variables
// override it (TEMPORAL_ADDRESS as before); a --namespace overrides both.
func TestTemporalOptionsFollowTemporalsEnvironmentConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
[profile.cloud]
address = "acme.a1b2c.tmprl.cloud:7233"
namespace = "acme.a1b2c"
api_key = "temporal-cloud-key"
`), 0o600))
	for _, v := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS"} {
		t.Setenv(v, "")
		require.NoError(t, os.Unsetenv(v))
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", path)
	t.Setenv("TEMPORAL_PROFILE", "cloud")

	opts, err := temporalOptions("")
	require.NoError(t, err)
	require.Equal(t, "acme.a1b2c.tmprl.cloud:7233", opts.HostPort)
	require.Equal(t, "acme.a1b2c", opts.Namespace)
	require.NotNil(t, opts.Credentials, "the API key is sent")
	require.NotNil(t, opts.ConnectionOptions.TLS, "an API key turns TLS on")

	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:7233")
	t.Setenv("TEMPORAL_NAMESPACE", "staging")
	opts, err = temporalOptions("")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7233", opts.HostPort)
	require.Equal(t, "staging", opts.Namespace)

	opts, err = temporalOptions("from-flag")
	require.NoError(t, err)
	require.Equal(t, "from-flag", opts.Namespace)
}

func TestTemporalOptionsNeedAnAddress(t *testing.T) {
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	t.Setenv("TEMPORAL_ADDRESS", "")
	require.NoError(t, os.Unsetenv("TEMPORAL_ADDRESS"))
	_, err := temporalOptions("")
	require.ErrorContains(t, err, "no Temporal address: set TEMPORAL_ADDRESS")

	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:7233")
	opts, err := temporalOptions("")
	require.NoError(t, err)
	require.Equal(t, "default", opts.Namespace)
}
