package providerkit_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

var eightDigits = regexp.MustCompile(`-\d{8}$`)

func TestNewPricesMergesOverridesWithoutChangingTheBuiltins(t *testing.T) {
	builtin := map[string]agentsdk.Price{"m": {Input: 1, Output: 2}, "n": {Input: 3}}
	prices, err := providerkit.NewPrices(builtin, map[string]agentsdk.Price{"m": {Input: 9}, "local": {}}, eightDigits)
	require.NoError(t, err)
	require.Equal(t, map[string]agentsdk.Price{"m": {Input: 1, Output: 2}, "n": {Input: 3}}, builtin)

	for id, want := range map[string]agentsdk.Price{"m": {Input: 9}, "n": {Input: 3}, "local": {}} {
		got, ok := prices.Lookup(agentsdk.ModelRef{ModelID: id})
		require.True(t, ok, id)
		require.Equal(t, want, got, id)
	}
}

func TestNewPricesRejectsNegativePrices(t *testing.T) {
	for _, p := range []agentsdk.Price{{Input: -1}, {Output: -1}, {CacheRead: -0.1}, {CacheWrite: -2}} {
		_, err := providerkit.NewPrices(nil, map[string]agentsdk.Price{"m": p}, eightDigits)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
		require.ErrorContains(t, err, "price of m is negative")
	}
}

func TestLookupTriesTheRefThenTheExactIDThenTheAlias(t *testing.T) {
	prices, err := providerkit.NewPrices(map[string]agentsdk.Price{
		"claude-x":          {Input: 1},
		"claude-x-20250101": {Input: 2},
	}, nil, eightDigits)
	require.NoError(t, err)

	for name, c := range map[string]struct {
		ref  agentsdk.ModelRef
		want agentsdk.Price
		ok   bool
	}{
		"exact ID":          {agentsdk.ModelRef{ModelID: "claude-x"}, agentsdk.Price{Input: 1}, true},
		"exact dated ID":    {agentsdk.ModelRef{ModelID: "claude-x-20250101"}, agentsdk.Price{Input: 2}, true},
		"alias of dated ID": {agentsdk.ModelRef{ModelID: "claude-x-20251231"}, agentsdk.Price{Input: 1}, true},
		"other date format": {agentsdk.ModelRef{ModelID: "claude-x-2025-12-31"}, agentsdk.Price{}, false},
		"unknown":           {agentsdk.ModelRef{ModelID: "llama3.2"}, agentsdk.Price{}, false},
	} {
		got, ok := prices.Lookup(c.ref)
		require.Equal(t, c.ok, ok, name)
		require.Equal(t, c.want, got, name)
	}
}
