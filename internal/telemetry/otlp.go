package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpSpanExporter is the OTLP span exporter the environment configures:
// none unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_TRACES_EXPORTER is
// not "none"). The exporters read the rest of the OTEL_EXPORTER_OTLP_*
// variables (headers, TLS, timeout) themselves.
func otlpSpanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" || !envSet("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
		return nil, nil
	}
	var exp sdktrace.SpanExporter
	var err error
	switch p := protocol("TRACES"); p {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("telemetry: OTLP protocol %q is not supported: use grpc or http/protobuf", p)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP span exporter: %w", err)
	}
	return exp, nil
}

// otlpMetricReader is the periodic OTLP metric reader the environment
// configures, on the same terms as otlpSpanExporter
// (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_METRICS_EXPORTER).
func otlpMetricReader(ctx context.Context) (sdkmetric.Reader, error) {
	if os.Getenv("OTEL_METRICS_EXPORTER") == "none" || !envSet("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
		return nil, nil
	}
	var exp sdkmetric.Exporter
	var err error
	switch p := protocol("METRICS"); p {
	case "grpc":
		exp, err = otlpmetricgrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlpmetrichttp.New(ctx)
	default:
		return nil, fmt.Errorf("telemetry: OTLP protocol %q is not supported: use grpc or http/protobuf", p)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP metric exporter: %w", err)
	}
	return sdkmetric.NewPeriodicReader(exp), nil
}
