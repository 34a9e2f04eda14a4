package openai

import (
	"regexp"

	"github.com/agentree/agentree/agentsdk"
)

// builtinPrices are OpenAI's list prices in USD per million tokens;
// CacheRead is the cached-input price. A dated model ID
// (gpt-4o-2024-08-06) is priced by its alias. A model not listed (a local
// server's llama3.2, say) costs 0 unless Options.Prices (the
// worker configuration's prices) names it.
var builtinPrices = map[string]agentsdk.Price{
	"gpt-4o":       {Input: 2.50, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CacheRead: 0.075},
	"gpt-4.1":      {Input: 2, Output: 8, CacheRead: 0.50},
	"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CacheRead: 0.10},
	"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CacheRead: 0.025},
	"gpt-5":        {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":   {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":   {Input: 0.05, Output: 0.40, CacheRead: 0.005},
	"gpt-5.1":      {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5.2":      {Input: 1.75, Output: 14, CacheRead: 0.175},
	"o3":           {Input: 2, Output: 8, CacheRead: 0.50},
	"o4-mini":      {Input: 1.10, Output: 4.40, CacheRead: 0.275},
}

// dateSuffix is the snapshot date of a dated model ID.
var dateSuffix = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`)
