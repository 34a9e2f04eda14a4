package adapter

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentree/agentree/agentsdk"
)

// instrumentation is the name the worker's spans and metrics are
// recorded under.
const instrumentation = "github.com/agentree/agentree/adapter"

// observer records the worker's own spans and metrics: one span per model
// call, following the OpenTelemetry GenAI conventions, and one per tool
// call; counters and latencies of both by provider, model and tool.
type observer struct {
	tracer       trace.Tracer
	modelCalls   metric.Int64Counter
	tokens       metric.Int64Counter
	cost         metric.Float64Counter
	modelLatency metric.Float64Histogram
	firstToken   metric.Float64Histogram
	toolCalls    metric.Int64Counter
	toolErrors   metric.Int64Counter
	toolLatency  metric.Float64Histogram
	approvalWait metric.Float64Histogram
	compactions  metric.Int64Counter
}

// newObserver makes the instruments on the providers; nil ones are
// OpenTelemetry's globals.
func newObserver(tp trace.TracerProvider, mp metric.MeterProvider) *observer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentation)
	o := &observer{tracer: tp.Tracer(instrumentation)}
	// An instrument's constructor fails only on an invalid name; these are
	// constants, and a failed one is a no-op instrument anyway.
	o.modelCalls, _ = m.Int64Counter("agentree.model.calls", metric.WithDescription("Model calls, by provider, model and outcome."))
	o.tokens, _ = m.Int64Counter("agentree.model.tokens", metric.WithDescription("Tokens of model calls, by provider, model and type (input, output, cache_read, cache_write)."))
	o.cost, _ = m.Float64Counter("agentree.model.cost", metric.WithDescription("Cost of model calls in USD, by provider and model."))
	o.modelLatency, _ = m.Float64Histogram("agentree.model.duration", metric.WithUnit("s"), metric.WithDescription("Model call latency."))
	o.firstToken, _ = m.Float64Histogram("agentree.model.time_to_first_token", metric.WithUnit("s"), metric.WithDescription("Time from a model call's start to its first streamed delta."))
	o.toolCalls, _ = m.Int64Counter("agentree.tool.calls", metric.WithDescription("Tool calls that ended, by tool and status."))
	o.toolErrors, _ = m.Int64Counter("agentree.tool.errors", metric.WithDescription("Tool calls that ended in an error, by tool."))
	o.toolLatency, _ = m.Float64Histogram("agentree.tool.duration", metric.WithUnit("s"), metric.WithDescription("Tool call duration."))
	o.compactions, _ = m.Int64Counter("agentree.compactions", metric.WithDescription("Compactions of an execution's context, by trigger (auto, manual) and outcome."))
	o.approvalWait, _ = m.Float64Histogram("agentree.tool.approval_wait", metric.WithUnit("s"), metric.WithDescription("Time a tool call waited for a person's approval."))
	return o
}

// providers wraps each provider so every call it answers is observed.
func (o *observer) providers(ps []agentsdk.Provider) []agentsdk.Provider {
	out := make([]agentsdk.Provider, len(ps))
	for i, p := range ps {
		out[i] = observedProvider{Provider: p, info: agentsdk.Describe(p), obs: o}
	}
	return out
}

// observedProvider is a provider whose calls are spans and metrics. It
// describes the endpoint of the provider it wraps.
type observedProvider struct {
	agentsdk.Provider
	info agentsdk.EndpointInfo
	obs  *observer
}

// Endpoint implements agentsdk.EndpointDescriber.
func (p observedProvider) Endpoint() agentsdk.EndpointInfo { return p.info }

// Stream calls the model in a span named "chat <model>" with the GenAI
// attributes: the request's, and the response's finish reason and usage.
func (p observedProvider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	model := attribute.NewSet(attribute.String("provider", req.Model.Provider), attribute.String("model", req.Model.ModelID))
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.system", req.Model.Provider),
		attribute.String("gen_ai.provider.name", req.Model.Provider),
		attribute.String("gen_ai.request.model", req.Model.ModelID),
		attribute.String("agentree.endpoint", p.info.Name),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *req.Temperature))
	}
	ctx, span := p.obs.tracer.Start(ctx, "chat "+req.Model.ModelID, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	start := time.Now()
	var first sync.Once
	resp, err := p.Provider.Stream(ctx, req, func(ev agentsdk.StreamEvent) {
		first.Do(func() {
			p.obs.firstToken.Record(ctx, time.Since(start).Seconds(), metric.WithAttributeSet(model))
		})
		onEvent(ev)
	})
	p.obs.modelLatency.Record(ctx, time.Since(start).Seconds(), metric.WithAttributeSet(model))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		p.obs.modelCalls.Add(ctx, 1, metric.WithAttributeSet(model), metric.WithAttributes(attribute.String("outcome", "error")))
		return resp, err
	}
	p.obs.modelCalls.Add(ctx, 1, metric.WithAttributeSet(model), metric.WithAttributes(attribute.String("outcome", "ok")))
	msg := resp.Message
	if msg.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", msg.Model))
	}
	span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(msg.StopReason)}))
	if u := msg.Usage; u != nil {
		span.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", u.Input),
			attribute.Int64("gen_ai.usage.output_tokens", u.Output),
			attribute.Int64("gen_ai.usage.cache_read_input_tokens", u.CacheRead),
			attribute.Int64("gen_ai.usage.cache_creation_input_tokens", u.CacheWrite),
			attribute.Float64("agentree.cost_usd", u.Cost),
		)
		for typ, n := range map[string]int64{"input": u.Input, "output": u.Output, "cache_read": u.CacheRead, "cache_write": u.CacheWrite} {
			p.obs.tokens.Add(ctx, n, metric.WithAttributeSet(model), metric.WithAttributes(attribute.String("type", typ)))
		}
		p.obs.cost.Add(ctx, u.Cost, metric.WithAttributeSet(model))
	}
	return resp, nil
}

// toolSpan starts the span of one tool call, named once its record says
// which tool it ran (endTool).
func (o *observer) toolSpan(ctx context.Context, toolCallID string) (context.Context, trace.Span) {
	return o.tracer.Start(ctx, "execute_tool", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.call.id", toolCallID),
	))
}

// endTool ends a tool call's span with what its record says — name,
// status, duration, truncation, approval wait — and counts the call;
// isError is the result's error flag (the model reads an error).
func (o *observer) endTool(ctx context.Context, span trace.Span, rec agentsdk.ToolCallRecord, isError bool, err error) {
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	if rec.ToolName == "" {
		return
	}
	span.SetName("execute_tool " + rec.ToolName)
	tool := attribute.String("tool", rec.ToolName)
	span.SetAttributes(
		attribute.String("gen_ai.tool.name", rec.ToolName),
		attribute.String("agentree.tool.status", string(rec.Status)),
		attribute.Int64("agentree.tool.duration_ms", rec.DurationMs),
		attribute.Bool("agentree.tool.truncated", rec.Truncated),
	)
	if a := rec.Approval; a != nil && a.DecidedAt != nil {
		wait := a.DecidedAt.Sub(a.RequestedAt)
		span.SetAttributes(attribute.Int64("agentree.tool.approval_wait_ms", wait.Milliseconds()),
			attribute.String("agentree.tool.approval_decision", a.Decision))
		o.approvalWait.Record(ctx, wait.Seconds(), metric.WithAttributes(tool, attribute.String("decision", a.Decision)))
	}
	if !rec.Status.Ended() {
		return
	}
	o.toolCalls.Add(ctx, 1, metric.WithAttributes(tool, attribute.String("status", string(rec.Status))))
	o.toolLatency.Record(ctx, float64(rec.DurationMs)/1000, metric.WithAttributes(tool))
	if rec.Status == agentsdk.ToolError || isError {
		span.SetStatus(codes.Error, "the tool returned an error")
		o.toolErrors.Add(ctx, 1, metric.WithAttributes(tool))
	}
}

// compacting is step.Deps.Compacting: a "compaction" span around each
// compaction (the summary's model call is its child), and a count by
// trigger and outcome.
func (o *observer) compacting(ctx context.Context, trigger string) (context.Context, func(agentsdk.CompactionRecord, error)) {
	ctx, span := o.tracer.Start(ctx, "compaction", trace.WithAttributes(attribute.String("agentree.compaction.trigger", trigger)))
	return ctx, func(rec agentsdk.CompactionRecord, err error) {
		outcome := "compacted"
		switch {
		case err != nil:
			outcome = "error"
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		case rec.Summary == "":
			outcome = "nothing_to_compact"
		default:
			span.SetAttributes(
				attribute.Int("agentree.compaction.tokens_before", rec.TokensBefore),
				attribute.Int("agentree.compaction.tokens_after", rec.TokensAfter),
				attribute.Int("agentree.compaction.compacted_messages", rec.CompactedMessages),
				attribute.Int("agentree.compaction.summary_tokens", rec.SummaryTokens),
				attribute.Int("agentree.compaction.limit", rec.Limit),
				attribute.String("gen_ai.request.model", rec.Model.ModelID))
		}
		span.SetAttributes(attribute.String("agentree.compaction.outcome", outcome))
		o.compactions.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(attribute.String("trigger", trigger), attribute.String("outcome", outcome)))
		span.End()
	}
}
