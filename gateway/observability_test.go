package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	"github.com/agentree/agentree/internal/telemetry"
)

// toolTurns is a multi-turn conversation's model: a tool call, then an
// answer to every message, each with usage and cost.
func toolTurns() agentsdk.Provider {
	return scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		u := agentsdk.Usage{Input: int64(100 + turn), Output: int64(10 + turn), CacheRead: 7, CacheWrite: 3, Cost: 0.25}
		if turn == 0 {
			return scripted.Turn{Text: "Let me check. ", Usage: u,
				ToolCalls: []agentsdk.ToolCall{{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"ping"}`)}}}
		}
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn), Usage: u}
	})
}

// runTracedConversation creates a multi-turn execution over REST whose
// first turn calls a tool, waits, sends it a message and waits again.
// RunEvents 1 continues it as new at every checkpoint.
func runTracedConversation(t *testing.T, tel *telemetry.Telemetry) (*env, string) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{toolTurns()}, tools: []*agentsdk.Tool{echoTool()}, tel: tel, runEvents: 1})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Echo ping, then tell me.",
		"models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "multi-turn", "maxTurns": 10},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "WAITING", time.Minute)
	e.ok(e.keyA, http.MethodPost, base+"/"+id+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "And now?"},
	})
	poll(t, time.Minute, func() bool {
		msgs := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+id+"/messages", nil), "messages")
		return len(msgs) == 6 && e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)["status"] == "WAITING"
	}, "the second turn never ended")
	return e, id
}

// TestOneTraceCoversTheExecution follows one multi-turn execution —
// created over REST, a tool call, a continue-as-new at every checkpoint, a
// message signalled in — through the spans of the gateway and the worker:
// the whole execution is one trace, rooted at the create request, with
// the Temporal SDK's workflow and activity spans, a GenAI span per model
// call and a span per tool call in their places. Requests that only read
// (the test's polling) or signal are traces of their own: none of the
// worker's spans may land in one.
func TestOneTraceCoversTheExecution(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{SpanExporter: spans})
	require.NoError(t, err)
	_, id := runTracedConversation(t, tel)

	got := spans.GetSpans().Snapshots()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range got {
		byID[s.SpanContext().SpanID()] = s
	}
	parentName := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID()]; ok {
			return p.Name()
		}
		return ""
	}
	named := func(name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range got {
			if s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}

	// The root: the create request's server span.
	var create sdktrace.ReadOnlySpan
	for _, s := range named("POST") {
		if !s.Parent().IsValid() && strings.HasSuffix(attrOf(s, "url.path"), "/agent-executions") {
			create = s
		}
	}
	require.NotNil(t, create, "no span for the create request")
	traceID := create.SpanContext().TraceID()

	// Every span Temporal records for the execution, and every model and
	// tool span, is in that trace; other traces are requests of their
	// own (reads, the signal request itself) and the processes'
	// background work (LISTEN, capabilities).
	inTrace := 0
	for _, s := range got {
		if s.SpanContext().TraceID() == traceID {
			inTrace++
			continue
		}
		require.NotEqual(t, id, attrOf(s, "temporalWorkflowID"), "span %s is outside the execution's trace", s.Name())
		require.NotRegexp(t, `^(chat|execute_tool) `, s.Name(), "span %s is outside the execution's trace", s.Name())
	}
	t.Logf("%d of %d spans in the execution's trace", inTrace, len(got))

	// The shape: request → StartWorkflow → RunWorkflow → StartActivity →
	// RunActivity → the model's or the tool's span.
	starts := named("StartWorkflow:react-agent")
	require.Len(t, starts, 1)
	require.Equal(t, create.SpanContext().SpanID(), starts[0].Parent().SpanID())
	require.Equal(t, id, attrOf(starts[0], "temporalWorkflowID"))
	runs := named("RunWorkflow:react-agent")
	require.GreaterOrEqual(t, len(runs), 2, "the runs that continued as new ended their spans")
	for _, r := range runs {
		require.Contains(t, []string{"StartWorkflow:react-agent", "RunWorkflow:react-agent"}, parentName(r),
			"a run continues the trace of the run before it")
	}

	chats := named("chat scripted-1")
	require.Len(t, chats, 3, "one span per model call")
	for _, c := range chats {
		require.Equal(t, traceID, c.SpanContext().TraceID())
		require.Equal(t, "RunActivity:agentree.CallModel", parentName(c))
		require.Equal(t, trace.SpanKindClient, c.SpanKind())
		require.Equal(t, "chat", attrOf(c, "gen_ai.operation.name"))
		require.Equal(t, scripted.Name, attrOf(c, "gen_ai.system"))
		require.Equal(t, "scripted-1", attrOf(c, "gen_ai.request.model"))
		require.NotEmpty(t, attrOf(c, "gen_ai.response.finish_reasons"))
		require.NotEmpty(t, attrOf(c, "gen_ai.usage.input_tokens"))
		require.NotEmpty(t, attrOf(c, "gen_ai.usage.output_tokens"))
	}
	require.Equal(t, `["tool_use"]`, attrOf(chats[0], "gen_ai.response.finish_reasons"))

	tools := named("execute_tool echo")
	require.Len(t, tools, 1, "one span per tool call")
	require.Equal(t, traceID, tools[0].SpanContext().TraceID())
	require.Contains(t, []string{"RunActivity:agentree.RunTool", "RunActivity:agentree.ExecuteTool"}, parentName(tools[0]))
	require.Equal(t, "echo", attrOf(tools[0], "gen_ai.tool.name"))
	require.Equal(t, "completed", attrOf(tools[0], "agentree.tool.status"))
	require.Equal(t, "false", attrOf(tools[0], "agentree.tool.truncated"))
	require.NotEmpty(t, attrOf(tools[0], "agentree.tool.duration_ms"))

	// The message sent to the waiting execution is delivered and handled
	// in its trace, though the signal request is a trace of its own.
	sent := named("SignalWorkflow:" + aclient.SignalName)
	require.Len(t, sent, 1)
	require.Equal(t, traceID, sent[0].SpanContext().TraceID())
	handled := named("HandleSignal:" + aclient.SignalName)
	require.Len(t, handled, 1)
	require.Equal(t, traceID, handled[0].SpanContext().TraceID())
	require.Equal(t, "SignalWorkflow:"+aclient.SignalName, parentName(handled[0]))
}

// attrOf is a span attribute's value as text ("" when absent).
func attrOf(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestMetricsEndpoint scrapes the gateway's /metrics after a conversation
// (the worker shares the test's meter provider): the token, cost and tool
// counters equal what the execution's llm_call entries and tool-call
// records say, executions are counted by kind and status, and the
// Temporal SDK's own metrics are there.
func TestMetricsEndpoint(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{Metrics: true})
	require.NoError(t, err)
	e, id := runTracedConversation(t, tel)
	ctx := context.Background()

	var want agentsdk.Usage
	calls := 0
	entries, _, err := e.es.ListEntries(ctx, e.orgA.ID, id, entrystore.Page{Limit: 100})
	require.NoError(t, err)
	for _, en := range entries {
		meta, ok, err := step.CallOf(agentsdk.Entry{Type: agentsdk.EntryType(en.Type), Role: agentsdk.Role(en.Role), Content: en.Content, Metadata: en.Metadata})
		require.NoError(t, err)
		if !ok {
			continue
		}
		want = want.Add(meta.Usage)
		calls++
	}
	require.Equal(t, 3, calls)
	tools, _, err := e.es.ListToolCalls(ctx, e.orgA.ID, id, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, tools, 1)

	m := scrape(t, e.metricsBase+"/metrics")
	model := map[string]string{"provider": scripted.Name, "model": "scripted-1"}
	require.Equal(t, float64(calls), m.sum("agentree_model_calls_total", model))
	for typ, n := range map[string]int64{"input": want.Input, "output": want.Output, "cache_read": want.CacheRead, "cache_write": want.CacheWrite} {
		require.Equal(t, float64(n), m.sum("agentree_model_tokens_total", with(model, "type", typ)), typ)
	}
	require.InDelta(t, want.Cost, m.sum("agentree_model_cost_total", model), 1e-9)
	require.Equal(t, float64(len(tools)), m.sum("agentree_tool_calls_total", map[string]string{"tool": tools[0].ToolName, "status": tools[0].Status}))
	require.Zero(t, m.sum("agentree_tool_errors_total", nil))
	require.Equal(t, float64(1), m.sum("agentree_tool_duration_seconds_count", map[string]string{"tool": "echo"}))
	require.Equal(t, float64(calls), m.sum("agentree_model_duration_seconds_count", model))
	require.Equal(t, float64(calls), m.sum("agentree_model_time_to_first_token_seconds_count", model))
	require.Equal(t, float64(1), m.sum("agentree_executions_started", map[string]string{"kind": "react-agent", "status": "RUNNING"}))
	require.Positive(t, m.sum("temporal_workflow_continue_as_new", map[string]string{"workflow_type": "react-agent"}), "the Temporal SDK's metrics")
}

// metrics are scraped metric families by name.
type metrics map[string]*dto.MetricFamily

// scrape reads a Prometheus text endpoint.
func scrape(t *testing.T, url string) metrics {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sum adds the values of name's series whose labels include labels
// (counters, gauges, and a histogram's _count and _sum).
func (m metrics) sum(name string, labels map[string]string) float64 {
	base, part := name, ""
	for _, suffix := range []string{"_count", "_sum"} {
		if f, ok := m[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) && f.GetType() == dto.MetricType_HISTOGRAM {
			base, part = strings.TrimSuffix(name, suffix), suffix
		}
	}
	var total float64
	f, ok := m[base]
	if !ok {
		return 0
	}
	for _, s := range f.GetMetric() {
		if !hasLabels(s, labels) {
			continue
		}
		switch {
		case part == "_count":
			total += float64(s.GetHistogram().GetSampleCount())
		case part == "_sum":
			total += s.GetHistogram().GetSampleSum()
		case s.Counter != nil:
			total += s.GetCounter().GetValue()
		case s.Gauge != nil:
			total += s.GetGauge().GetValue()
		}
	}
	return total
}

func hasLabels(s *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range s.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

// with is labels plus one more.
func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}

// TestCompactionIsASpan: a compaction is a "compaction" span with its
// figures, the summary's model call a chat span under it, in the
// execution's trace.
func TestCompactionIsASpan(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{SpanExporter: spans})
	require.NoError(t, err)
	var reqs requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{compactingModel(&reqs)}, tools: []*agentsdk.Tool{echoTool()}, tel: tel,
		windows: agentsdk.ContextWindows{"scripted-small": smallWindow}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "[m1] Echo this.", "models": smallModel,
		"tools": []string{"echo"}, "config": map[string]any{"mode": "multi-turn", "loopThreshold": -1},
	})
	id := ex["id"].(string)
	for i := 2; ; i++ {
		e.waitStatus(id, "WAITING", time.Minute)
		var found bool
		for _, s := range spans.GetSpans().Snapshots() {
			found = found || s.Name() == "compaction"
		}
		if found {
			break
		}
		require.Less(t, i, 20, "no compaction in 20 messages")
		seq := e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)["currentCheckpointSeq"].(float64)
		e.ok(e.keyA, http.MethodPost, base+"/"+id+"/signal", map[string]any{"signalName": "userMessage",
			"signalValue": map[string]any{"text": fmt.Sprintf("[m%d] Echo this.", i)}})
		poll(t, time.Minute, func() bool {
			return e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)["currentCheckpointSeq"].(float64) > seq
		}, "the turn never ended")
	}
	var comp sdktrace.ReadOnlySpan
	for _, s := range spans.GetSpans().Snapshots() {
		if s.Name() == "compaction" {
			comp = s
		}
	}
	require.Equal(t, "auto", attrOf(comp, "agentree.compaction.trigger"))
	require.Equal(t, "compacted", attrOf(comp, "agentree.compaction.outcome"))
	require.NotEmpty(t, attrOf(comp, "agentree.compaction.tokens_before"))
	require.Equal(t, fmt.Sprint(smallWindow), attrOf(comp, "agentree.compaction.limit"))
	var summary sdktrace.ReadOnlySpan
	for _, s := range spans.GetSpans().Snapshots() {
		if s.Parent().SpanID() == comp.SpanContext().SpanID() && strings.HasPrefix(s.Name(), "chat ") {
			summary = s
		}
	}
	require.NotNil(t, summary, "the summary's model call is a chat span under the compaction")
	require.Equal(t, comp.SpanContext().TraceID(), summary.SpanContext().TraceID())
}
