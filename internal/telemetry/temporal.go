package telemetry

import (
	"fmt"

	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Instrument adds to a Temporal client's options the SDK's OpenTelemetry
// tracing interceptor — which a worker built from the client inherits —
// and its metrics handler, so the SDK's own metrics join Agentree's.
// The interceptor carries the trace from the client's StartWorkflow to the
// workflow, its activities and every run it continues as new with.
func (t *Telemetry) Instrument(opts *client.Options) error {
	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            t.TracerProvider.Tracer("go.temporal.io/sdk"),
		TextMapPropagator: t.Propagator,
	})
	if err != nil {
		return fmt.Errorf("telemetry: temporal tracing interceptor: %w", err)
	}
	opts.Interceptors = append([]interceptor.ClientInterceptor{tracing}, opts.Interceptors...)
	opts.MetricsHandler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: t.MeterProvider.Meter("go.temporal.io/sdk"),
	})
	return nil
}
