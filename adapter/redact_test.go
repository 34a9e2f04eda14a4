package adapter_test

import (
	"context"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
)

// leaks matches what a tenant must not read: a URL, an IP address, a port.
var leaks = regexp.MustCompile(`://|\b\d{1,3}(\.\d{1,3}){3}\b|:\d{2,5}\b`)

// TestTenantErrorsCarryNoEndpointAddresses: a model endpoint whose server
// refuses connections fails with a transport error naming its URL and
// address; the fallback reason a later model's llm_call entry records, the
// failed execution's errorMessage and its agent.failed event name the
// endpoint and a reference, never the address.
func TestTenantErrorsCarryNoEndpointAddresses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/v1"
	require.NoError(t, ln.Close()) // nothing listens there any more
	vllm, err := openai.New(openai.Options{Name: "local-vllm", BaseURL: dead, APIKey: "x"})
	require.NoError(t, err)
	fallback := scripted.New(scripted.Turns(scripted.Turn{Text: "from the fallback"})).Named("fallback")
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{vllm, fallback}, ModelAttempts: 2, ReconcileInterval: -1}, false)
	ctx := context.Background()
	unreachable := agentsdk.ModelRef{Provider: "local-vllm", ModelID: "m1"}

	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{unreachable, {Provider: "fallback", ModelID: "fallback-1"}}}, "hello")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	entries, _, err := h.es.ListEntries(ctx, h.org.ID, ex.ID, entrystore.Page{Limit: 100})
	require.NoError(t, err)
	reasons := 0
	for _, en := range entries {
		meta, ok, err := step.CallOf(agentsdk.Entry{Type: agentsdk.EntryType(en.Type), Role: agentsdk.Role(en.Role), Content: en.Content, Metadata: en.Metadata})
		require.NoError(t, err)
		if ok && meta.FallbackReason != "" {
			reasons++
			require.NotRegexp(t, leaks, meta.FallbackReason)
			require.Contains(t, meta.FallbackReason, "the model endpoint `local-vllm` is unreachable")
			require.Regexp(t, `\(ref [0-9a-f]{12}\)$`, meta.FallbackReason)
		}
	}
	require.Equal(t, 1, reasons, "the fallback model's llm_call records why")

	ex = h.start(agentsdk.Config{Models: []agentsdk.ModelRef{unreachable}}, "hello")
	row := h.waitStatus(ex.ID, "FAILED", time.Minute)
	require.NotRegexp(t, leaks, row.Error)
	require.Contains(t, row.Error, "model_unreachable: the model endpoint `local-vllm` is unreachable")
	// The status row and the terminal event are written apart: poll for
	// the event rather than read it once.
	var failed []string
	require.Eventually(t, func() bool {
		failed = failed[:0]
		rows, err := h.es.Pool().Query(ctx, `SELECT data::text FROM agent_stream_event WHERE agent_execution_id = $1 AND event = 'agent.failed'`, ex.ID)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var data string
			require.NoError(t, rows.Scan(&data))
			failed = append(failed, data)
		}
		require.NoError(t, rows.Err())
		return len(failed) > 0
	}, time.Minute, 5*time.Millisecond, "the failed execution never streamed agent.failed")
	require.Len(t, failed, 1)
	require.NotRegexp(t, leaks, failed[0])
	require.Contains(t, failed[0], "local-vllm")
}
