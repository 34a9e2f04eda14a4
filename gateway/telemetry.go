package gateway

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"
)

// instrumentation is the name the gateway's own metrics are recorded under.
const instrumentation = "github.com/agentree/agentree/gateway"

// traced makes every HTTP request a server span (otelhttp) continuing the
// trace its traceparent header names, if any; REST handlers run in
// process, so an execution created in the request records that span's
// context.
func (o *Options) traced(h http.Handler) http.Handler {
	return otelhttp.NewHandler(h, "gateway",
		otelhttp.WithTracerProvider(o.TracerProvider), otelhttp.WithMeterProvider(o.MeterProvider),
		otelhttp.WithPropagators(o.Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
		// A stream stays open as long as the execution runs; its span would
		// only say that it ended.
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/metrics" && r.URL.Path != "/healthz" }),
	)
}

// grpcTelemetry is the gRPC server's span and metric handler.
func (o *Options) grpcTelemetry() grpc.ServerOption {
	return grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(o.TracerProvider),
		otelgrpc.WithMeterProvider(o.MeterProvider), otelgrpc.WithPropagators(o.Propagator)))
}

// subscribers counts the SSE streams open now.
func (o *Options) subscribers() metric.Int64UpDownCounter {
	c, _ := o.MeterProvider.Meter(instrumentation).Int64UpDownCounter("agentree.sse.subscribers",
		metric.WithDescription("SSE streams open on this gateway."))
	return c
}

// telemetryDefaults fills in OpenTelemetry's globals for unset providers.
func (o *Options) telemetryDefaults() {
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = otel.GetTextMapPropagator()
	}
}
