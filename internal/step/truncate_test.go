package step_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/step"
)

// noteLen is the length of Truncate's note about s at its longest.
func noteLen(s string) int {
	return len(fmt.Sprintf("\n\n[… %d bytes of %d omitted: the full output is kept in the content store …]\n\n", len(s), len(s)))
}

// split takes a truncated output apart: head, what the note says was
// omitted, tail. ok is false when there is no note.
func split(t *testing.T, out string) (head string, omitted int, tail string, ok bool) {
	t.Helper()
	head, rest, ok := strings.Cut(out, "\n\n[… ")
	if !ok {
		return "", 0, "", false
	}
	count, rest, found := strings.Cut(rest, " bytes of ")
	require.True(t, found, out)
	omitted, err := strconv.Atoi(count)
	require.NoError(t, err, out)
	_, tail, found = strings.Cut(rest, " omitted: the full output is kept in the content store …]\n\n")
	require.True(t, found, out)
	return head, omitted, tail, true
}

func TestTruncateLeavesOutputWithinTheLimitAlone(t *testing.T) {
	for _, c := range []struct {
		s     string
		limit int
	}{{"", 10}, {"short", 10}, {"exactly10!", 10}, {"é漢🙂", 9}, {strings.Repeat("x", 1<<20), 0}, {"any", -1}} {
		out, cut := step.Truncate(c.s, c.limit)
		require.False(t, cut, "%q limit %d", c.s, c.limit)
		require.Equal(t, c.s, out)
	}
}

func TestTruncateKeepsHeadAndTailWithANote(t *testing.T) {
	s := "HEAD" + strings.Repeat("0123456789", 10_000) + "TAIL"
	out, cut := step.Truncate(s, 1000)
	require.True(t, cut)
	require.LessOrEqual(t, len(out), 1000)
	head, omitted, tail, ok := split(t, out)
	require.True(t, ok, "the note says what was left out")
	require.True(t, strings.HasPrefix(head, "HEAD"))
	require.True(t, strings.HasSuffix(tail, "TAIL"))
	require.Equal(t, len(s), len(head)+omitted+len(tail))
	require.Contains(t, out, fmt.Sprintf("bytes of %d omitted", len(s)))
	require.InDelta(t, len(head), len(tail), 1, "head and tail share the room")
}

// TestTruncateStaysWithinTheLimitWhenTheCountGrowsADigit covers a cut
// whose omitted count has more digits than len(s)-limit.
func TestTruncateStaysWithinTheLimitWhenTheCountGrowsADigit(t *testing.T) {
	out, cut := step.Truncate(strings.Repeat("a", 204), 200)
	require.True(t, cut)
	require.LessOrEqual(t, len(out), 200)
	_, omitted, _, ok := split(t, out)
	require.True(t, ok)
	require.Greater(t, len(strconv.Itoa(omitted)), len(strconv.Itoa(204-200)), "the case this covers")
}

func TestTruncateBelowTheNotesSizeKeepsTheHead(t *testing.T) {
	out, cut := step.Truncate("漢字のテキスト", 10)
	require.True(t, cut)
	require.Equal(t, "漢字の", out)
}

// TestTruncateProperties checks every size of many multi-byte inputs
// against every limit: the output fits, is valid UTF-8, keeps the input's
// head and tail, and accounts for every byte it leaves out.
func TestTruncateProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "Z", " ", "\n", "é", "ß", "漢", "€", "🙂", "𝄞"}
	for n := 0; n < 420; n += 1 + n/40 {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		for limit := 1; limit <= len(s)+1; limit += 1 + limit/64 {
			out, cut := step.Truncate(s, limit)
			msg := fmt.Sprintf("len %d limit %d: %q", len(s), limit, out)
			if len(s) <= limit {
				require.False(t, cut, msg)
				require.Equal(t, s, out, msg)
				continue
			}
			require.True(t, cut, msg)
			require.LessOrEqual(t, len(out), limit, msg)
			require.True(t, utf8.ValidString(out), msg)
			head, omitted, tail, ok := split(t, out)
			if limit < noteLen(s) {
				require.False(t, ok, msg)
				require.True(t, strings.HasPrefix(s, out), msg)
				require.Greater(t, len(out), limit-utf8.UTFMax, "%s: cut no more than a rune short", msg)
				continue
			}
			require.True(t, ok, "%s: note present", msg)
			require.True(t, strings.HasPrefix(s, head), msg)
			require.True(t, strings.HasSuffix(s, tail), msg)
			require.Equal(t, len(s), len(head)+omitted+len(tail), msg)
			if limit-noteLen(s) >= 2*utf8.UTFMax {
				require.NotEmpty(t, head, msg)
				require.NotEmpty(t, tail, msg)
			}
		}
	}
}
