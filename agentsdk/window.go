package agentsdk

import (
	"fmt"
	"slices"
	"strings"
)

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
func ContextWindow(m ModelRef) int { return ContextWindows(nil).Of(m) }

// ContextWindows are context windows in tokens by model ID prefix (or
// "provider/prefix"), extending and overriding the built-in table: what
// a worker's configuration adds for models it serves.
type ContextWindows map[string]int

// Of is m's context window: the longest prefix matching m in w, then in
// the built-in table, else DefaultContextWindow. A "provider/prefix" key
// matches only that provider's models.
func (w ContextWindows) Of(m ModelRef) int {
	if n, ok := longestPrefix(w, m); ok {
		return n
	}
	if n, ok := longestPrefix(contextWindows, m); ok {
		return n
	}
	return DefaultContextWindow
}

func longestPrefix(table map[string]int, m ModelRef) (int, bool) {
	best, window, found := -1, 0, false
	scoped := m.Provider + "/" + m.ModelID
	for prefix, w := range table {
		if (strings.HasPrefix(m.ModelID, prefix) || strings.HasPrefix(scoped, prefix)) && len(prefix) > best {
			best, window, found = len(prefix), w, true
		}
	}
	return window, found
}

// Problems lists the entries of w that are not a usable window.
func (w ContextWindows) Problems(field string) []string {
	var problems []string
	for k, n := range w {
		if k == "" || n < 1024 || n > 100_000_000 {
			problems = append(problems, fmt.Sprintf("%s[%q] must be a model ID prefix with a window of 1024 to 100,000,000 tokens; got %d", field, k, n))
		}
	}
	slices.Sort(problems)
	return problems
}

// EstimateTokens is a rough token count of text: a token per 4 bytes,
// what tokenizers average on English and code. Used where no provider
// counted.
func EstimateTokens(b []byte) int { return (len(b) + 3) / 4 }
