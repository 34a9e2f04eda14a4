package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplayFitKeepsBothEnds: a replay past its budget keeps decision
// points from its start and its end, alternately, and drops the middle;
// one within it keeps all.
func TestReplayFitKeepsBothEnds(t *testing.T) {
	lines := make([]string, 10)
	for i := range lines {
		lines[i] = strings.Repeat("x", 40) // 10 tokens each
	}
	head, tail := fit(lines, 45)
	require.Equal(t, 2, head)
	require.Equal(t, 2, tail)
	head, tail = fit(lines, 1000)
	require.Equal(t, 10, head+tail)
	head, tail = fit(lines, 5)
	require.Zero(t, head+tail)
}
