package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	research "github.com/agentree/agentree/agentsdk/tools/demo"
)

// TestToolDelayHoldsEveryTool: with EnvToolDelay set, no tool answers
// before its context ends.
func TestToolDelayHoldsEveryTool(t *testing.T) {
	t.Setenv(research.EnvToolDelay, "1h")
	for _, tool := range research.Tools() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tool.Run(ctx, agentsdk.ToolInvocation{Arguments: []byte(`{"query":"history","id":"x","text":"a b"}`)})
			done <- err
		}()
		require.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, 10*time.Millisecond, tool.Name)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled, tool.Name)
	}
}

func TestBadToolDelayIsIgnored(t *testing.T) {
	t.Setenv(research.EnvToolDelay, "slowly")
	for _, tool := range research.Tools() {
		if tool.Name == research.WordCountTool {
			out, err := tool.Run(context.Background(), agentsdk.ToolInvocation{Arguments: []byte(`{"text":"a b c"}`)})
			require.NoError(t, err)
			require.Equal(t, "3 words", out)
		}
	}
}
