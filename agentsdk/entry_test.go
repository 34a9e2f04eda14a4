package agentsdk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

func TestPreviewKeepsShortTextWhole(t *testing.T) {
	for _, s := range []string{"", "hello", strings.Repeat("x", agentsdk.PreviewBytes), strings.Repeat("é", agentsdk.PreviewBytes/2)} {
		require.Equal(t, s, agentsdk.Preview(s))
	}
}

func TestPreviewCutsOnARuneBoundary(t *testing.T) {
	for _, unit := range []string{"x", "é", "漢", "🙂", "a漢🙂é"} {
		for pad := range 4 {
			s := strings.Repeat("-", pad) + strings.Repeat(unit, agentsdk.PreviewBytes+1)
			got := agentsdk.Preview(s)
			head, ok := strings.CutSuffix(got, "…")
			require.True(t, ok, "a cut preview ends with an ellipsis")
			require.True(t, utf8.ValidString(head), "unit %q pad %d: %q", unit, pad, head)
			require.True(t, strings.HasPrefix(s, head))
			require.LessOrEqual(t, len(head), agentsdk.PreviewBytes)
			require.Greater(t, len(head), agentsdk.PreviewBytes-utf8.UTFMax, "cuts no more than one rune short")
		}
	}
}
