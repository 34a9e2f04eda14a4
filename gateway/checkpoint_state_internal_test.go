package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckpointState serves a stored State with seed 000's fields beside
// it, derived from its usage and turn; a state stored with them, and one
// the engine did not write, as they are.
func TestCheckpointState(t *testing.T) {
	got := checkpointState([]byte(`{"turn":2,"steps":2,"usage":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}}}`))
	require.JSONEq(t, `{"turn":2,"steps":2,
		"usage":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}},
		"usageByModel":{"p/a":{"input":3,"output":2,"calls":1},"p/b":{"input":1,"output":1,"cost":0.5,"calls":1}},
		"totalUsage":{"input":4,"output":3,"cost":0.5,"calls":2},"turnIndex":2}`, string(got))

	got = checkpointState([]byte(`{"turn":0,"steps":0}`))
	require.JSONEq(t, `{"turn":0,"steps":0,"usageByModel":{},"totalUsage":{"input":0,"output":0},"turnIndex":0}`, string(got))

	for _, as := range []string{
		`{"turn":1,"steps":1,"usageByModel":{},"totalUsage":{"input":0,"output":0},"turnIndex":1}`,
		`{"turnIndex":3}`,
		`[1]`,
	} {
		require.Equal(t, as, string(checkpointState([]byte(as))))
	}
}
