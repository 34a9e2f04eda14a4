// Package telemetry sets up what Agentree's processes observe themselves
// with: OpenTelemetry traces and metrics exported by the standard OTEL_*
// environment variables, a Prometheus /metrics handler, the Temporal
// SDK's tracing interceptor and metrics handler, pgx pool tracing, and
// slog JSON logs that carry the trace ID. With no exporter configured and
// metrics off, its providers are OpenTelemetry's no-ops and cost next to
// nothing.
//
// It imports OpenTelemetry, the Temporal SDK's contrib/opentelemetry,
// otelpgx and the Prometheus client; nothing of Agentree's.
package telemetry
