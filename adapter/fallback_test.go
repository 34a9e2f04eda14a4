package adapter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestModelFallsBackAfterItsAttempts makes the primary model fail with a
// retryable error every time: it is tried exactly ModelAttempts times —
// the count survives from attempt to attempt in the activity's heartbeat
// details — and then the fallback model answers.
func TestModelFallsBackAfterItsAttempts(t *testing.T) {
	primary := scripted.New(scripted.Turns(scripted.Turn{FailTimes: 100}))
	fallback := scripted.New(scripted.Turns(scripted.Turn{Text: "from the fallback"})).Named("fallback")
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{primary, fallback}, ModelAttempts: 3, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model(""), {Provider: "fallback", ModelID: "fallback-1"}}}, "hello")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "from the fallback", res.Text)
	require.Equal(t, 3, primary.Calls(), "the primary is tried ModelAttempts times")
	require.Equal(t, 1, fallback.Calls())
}

// TestNonRetryableModelErrorDoesNotFallBack: a bad request fails the same
// on any model, so the execution fails without trying the next one.
func TestNonRetryableModelErrorDoesNotFallBack(t *testing.T) {
	bad := &agentsdk.ModelError{Provider: scripted.Name, StatusCode: 400, Message: "[scripted] bad request"}
	primary := scripted.New(scripted.Turns(scripted.Turn{FailTimes: 100, Err: bad}))
	fallback := scripted.New(scripted.Turns(scripted.Turn{Text: "from the fallback"})).Named("fallback")
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{primary, fallback}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model(""), {Provider: "fallback", ModelID: "fallback-1"}}}, "hello")
	row := h.waitStatus(ex.ID, "FAILED", time.Minute)
	require.Contains(t, row.Error, "bad request")
	require.Equal(t, 1, primary.Calls())
	require.Zero(t, fallback.Calls())
}
