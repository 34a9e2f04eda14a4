package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnifiedDiff: hunks with three lines of context, merged when close,
// as diff -u writes them; a new file against /dev/null; a missing final
// newline marked; files that differ past the edit bound are not diffed.
func TestUnifiedDiff(t *testing.T) {
	lines := func(from, to int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			sb.WriteString(string(rune('a'+i-1)) + "\n")
		}
		return sb.String()
	}
	a := lines(1, 12)
	b := strings.Replace(strings.Replace(a, "b\n", "B\n", 1), "k\n", "", 1) + "m\n"
	d, ok := unifiedDiff("a/f", "b/f", a, b)
	require.True(t, ok)
	require.Equal(t, `--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -8,5 +8,5 @@
 h
 i
 j
-k
 l
+m
`, d)

	d, ok = unifiedDiff("/dev/null", "b/new", "", "one\ntwo")
	require.True(t, ok)
	require.Equal(t, "--- /dev/null\n+++ b/new\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n", d)

	d, ok = unifiedDiff("a/x", "b/x", "same\n", "same\n")
	require.True(t, ok)
	require.Equal(t, "--- a/x\n+++ b/x\n", d, "equal texts have no hunk")

	var many, other strings.Builder
	for i := 0; i < maxEdits; i++ {
		many.WriteString("x\n")
		other.WriteString("y\n")
	}
	_, ok = unifiedDiff("a/big", "b/big", many.String(), other.String())
	require.False(t, ok, "past the edit bound no diff is computed")
}
