package agentsdk

import "strings"

// DefaultContextWindow is the context window of a model the table does
// not know, in tokens.
const DefaultContextWindow = 128_000

// contextWindows are known models' context windows in tokens, by model
// ID prefix; the longest matching prefix wins.
var contextWindows = map[string]int{
	"claude-":     200_000,
	"gpt-4o":      128_000,
	"gpt-4.1":     1_047_576,
	"gpt-5":       400_000,
	"o3":          200_000,
	"o4":          200_000,
	"scripted-":   32_768,
	"gpt-4-turbo": 128_000,
}

// ContextWindow is the model's context window in tokens: from the table
// of known models by ID prefix, else DefaultContextWindow.
func ContextWindow(m ModelRef) int {
	best, window := "", DefaultContextWindow
	for prefix, w := range contextWindows {
		if strings.HasPrefix(m.ModelID, prefix) && len(prefix) > len(best) {
			best, window = prefix, w
		}
	}
	return window
}

// EstimateTokens is a rough token count of text: a token per 4 bytes,
// what tokenizers average on English and code. Used where no provider
// counted.
func EstimateTokens(b []byte) int { return (len(b) + 3) / 4 }
