package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuotaCommands: `quota get` shows no limits until `quota set` sets
// them; a set keeps the limits it does not name, and 0 removes one; a bad
// value is the API's 400.
func TestQuotaCommands(t *testing.T) {
	d := startDev(t)
	ctx := context.Background()
	c := func(args ...string) (string, string, error) { return cli(ctx, append(args, d.common...)...) }

	out, _, err := c("quota", "get")
	require.NoError(t, err)
	require.Regexp(t, `maxRunning +no limit +\d+ not ended`, out)
	require.Regexp(t, `tokensPerDay +no limit +0 today`, out)

	out, _, err = c("quota", "set", "--max-running", "3", "--tokens-per-day", "5000")
	require.NoError(t, err)
	require.Regexp(t, `maxRunning +3 `, out)
	require.Regexp(t, `tokensPerDay +5000 `, out)

	out, _, err = c("quota", "set", "--cost-per-day", "2.5", "--max-running", "0")
	require.NoError(t, err)
	require.Regexp(t, `maxRunning +no limit`, out)
	require.Regexp(t, `tokensPerDay +5000 `, out, "a limit not named keeps its value")
	require.Regexp(t, `costPerDay +2.5 `, out)

	out, _, err = c("quota", "get", "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"costPerDay":2.5`)

	_, _, err = c("quota", "set", "--tokens-per-day", "-1")
	require.ErrorContains(t, err, "tokensPerDay must be 0 (no limit) or more")
}
