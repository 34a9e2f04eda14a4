package workerconfig

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestToolCallsPerOrgWaitTheirTurn: past its cap, an organization's call
// waits for one of its own to end, while another organization's runs at
// once; a waiting call whose context ends gives up.
func TestToolCallsPerOrgWaitTheirTurn(t *testing.T) {
	release := make(chan struct{})
	running := make(chan string, 10)
	tool := &agentsdk.Tool{Name: "slow", Run: func(ctx context.Context, call agentsdk.ToolInvocation) (string, error) {
		running <- call.OrgID + "/" + call.ToolCallID
		<-release
		return "ok", nil
	}}
	limitPerOrg([]*agentsdk.Tool{tool}, 2)
	call := func(org, id string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := tool.Run(context.Background(), agentsdk.ToolInvocation{OrgID: org, ToolCallID: id})
			done <- err
		}()
		return done
	}
	a1, a2, a3 := call("a", "1"), call("a", "2"), call("a", "3")
	// Two of a's three calls run, whichever came first.
	first, second := <-running, <-running
	require.Regexp(t, `^a/[123]$`, first)
	require.Regexp(t, `^a/[123]$`, second)
	b1 := call("b", "1")
	require.Equal(t, "b/1", <-running, "another organization's call runs at once")
	select {
	case id := <-running:
		t.Fatalf("%s ran past its organization's cap", id)
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := tool.Run(ctx, agentsdk.ToolInvocation{OrgID: "a", ToolCallID: "4"})
		gaveUp <- err
	}()
	cancel()
	require.ErrorIs(t, <-gaveUp, context.Canceled)

	release <- struct{}{}
	select {
	case id := <-running:
		require.Contains(t, []string{"a/1", "a/2", "a/3"}, id, "a slot freed: a's third call runs")
	case <-time.After(10 * time.Second):
		t.Fatal("a's waiting call never ran")
	}
	close(release)
	for _, done := range []chan error{a1, a2, a3, b1} {
		require.NoError(t, <-done)
	}
}
