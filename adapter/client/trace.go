package client

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentree/agentree/entrystore"
)

// traceparent is the W3C traceparent of ctx's span; "" when ctx carries
// no sampled or unsampled span (no tracing).
func traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}

// WithTraceparent is ctx continuing the trace tp (an execution's
// Traceparent), so a workflow started with it joins the trace of the
// request that created the execution. An empty or malformed tp leaves ctx
// as it is.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// inExecutionTrace is ctx, its values kept, continuing the execution's
// trace instead of the caller's, so what a signal or a cancellation does
// in the workflow shows in the one trace of the execution. The caller's
// span notes the execution's trace ID, to go from one to the other.
func inExecutionTrace(ctx context.Context, ex entrystore.Execution) context.Context {
	if ex.Traceparent == "" {
		return ctx
	}
	detached := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	out := WithTraceparent(detached, ex.Traceparent)
	if sc := trace.SpanContextFromContext(out); sc.IsValid() {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("agentree.execution.trace_id", sc.TraceID().String()))
	}
	return out
}
