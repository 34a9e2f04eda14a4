package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckpointState serves a stored State with seed 000's fields beside
// it, derived from its usage and turn, totalUsage with the seed's
// inputTokens and outputTokens (and its earlier input and output); a state
// stored with them keeps them, its totalUsage named as the seed names it;
// one the engine did not write is served as it is.
func TestCheckpointState(t *testing.T) {
	got := checkpointState([]byte(`{"turn":2,"steps":2,"usage":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}}}`))
	require.JSONEq(t, `{"turn":2,"steps":2,
		"usage":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}},
		"usageByModel":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}},
		"totalUsage":{"inputTokens":4,"outputTokens":3,"input":4,"output":3,"cost":0.5,"calls":2},"turnIndex":2}`, string(got))

	got = checkpointState([]byte(`{"turn":0,"steps":0}`))
	require.JSONEq(t, `{"turn":0,"steps":0,"usageByModel":{},"totalUsage":{"inputTokens":0,"outputTokens":0,"input":0,"output":0},"turnIndex":0}`, string(got))

	got = checkpointState([]byte(`{"turn":1,"steps":1,"usageByModel":{},"totalUsage":{"input":5,"output":1},"turnIndex":1}`))
	require.JSONEq(t, `{"turn":1,"steps":1,"usageByModel":{},"totalUsage":{"inputTokens":5,"outputTokens":1,"input":5,"output":1},"turnIndex":1}`, string(got))

	for _, as := range []string{
		`{"turnIndex":3}`,
		`[1]`,
	} {
		require.Equal(t, as, string(checkpointState([]byte(as))))
	}
}
