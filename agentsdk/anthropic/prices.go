package anthropic

import (
	"regexp"

	"github.com/agentree/agentree/agentsdk"
)

// builtinPrices are Anthropic's list prices in USD per million tokens;
// CacheWrite is the 5-minute cache write (1.25× input), CacheRead the cache
// hit (0.1× input). A dated model ID (claude-sonnet-4-5-20250929) is priced
// by its alias. A model not listed costs 0 unless Options.Prices (the worker
// configuration's prices) names it.
var builtinPrices = map[string]agentsdk.Price{
	"claude-opus-4-6":   {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.50},
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.50},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.50},
	"claude-opus-4-0":   {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.50},
	"claude-opus-4":     {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.50},
	"claude-sonnet-4-6": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-sonnet-4-0": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheWrite: 1.25, CacheRead: 0.10},
}

// dateSuffix is the snapshot date of a dated model ID.
var dateSuffix = regexp.MustCompile(`-\d{8}$`)
