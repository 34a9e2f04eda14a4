package client

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
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
