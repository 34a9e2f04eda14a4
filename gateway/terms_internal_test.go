package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDistinctiveTerms: the rules of terms.go, one case each.
func TestDistinctiveTerms(t *testing.T) {
	for text, want := range map[string][]string{
		"Please refund order 84713.":                          {"84713"},
		"Open src/auth.go and see example.com today":          {"src/auth.go", "example.com"},
		"set order_id, parseConfig and max-tokens":            {"order_id", "parseConfig", "max-tokens"},
		"It ships to Berlin via AWS. Then it arrives":         {"Berlin", "AWS"},
		"The reconciliation failed; a misconfiguration again": {"reconciliation", "misconfiguration"},
		"I will do it now. Thanks! Sure? Yes":                 nil,
		"v2 or 7 of 84713 and 84713":                          {"v2", "84713"},
	} {
		require.Equal(t, want, distinctiveTerms(text), text)
	}
	require.True(t, holdsTerm("order 84713 shipped", "84713"))
	require.False(t, holdsTerm("order 847134 shipped", "84713"), "not inside a longer number")
	require.True(t, holdsTerm("see invoices/2026/acme.pdf.", "invoices/2026/acme.pdf"))
}
