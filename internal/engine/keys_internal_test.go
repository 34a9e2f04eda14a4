package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestStepKeysKeepTheirExecutionsFormat: an execution started with short
// keys keys every step {sequence}/{step} in every run; one started
// before keeps {execution}/{sequence}/{step}, so a retry or replay of a
// step finds what the step wrote.
func TestStepKeysKeepTheirExecutionsFormat(t *testing.T) {
	for _, tc := range []struct {
		short      bool
		key, later string
	}{{false, "ex-1/3/1", "ex-1/4/1"}, {true, "3/1", "4/1"}} {
		s := &segment{in: SegmentInput{ExecutionID: "ex-1", Sequence: 3, ShortKeys: tc.short}, state: &agentsdk.State{}}
		require.Equal(t, tc.key, s.peekKey())
		require.Equal(t, tc.key, s.key())
		next := &segment{in: s.nextInput(false), state: &agentsdk.State{}}
		require.Equal(t, tc.short, next.in.ShortKeys, "the next run keeps the format")
		require.Equal(t, tc.later, next.key())
	}
}
