package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Config says what to observe. The zero value exports nothing unless the
// OTEL_* environment variables ask for it.
type Config struct {
	// ServiceName is the service.name resource attribute unless
	// OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) sets one; default
	// "agentree".
	ServiceName string
	// Metrics turns on the Prometheus handler (Telemetry.MetricsHandler).
	Metrics bool
	// SpanExporter, when set, receives every span (synchronously: tests
	// read them back at once); otherwise spans go to the OTLP exporter the
	// environment configures, if any.
	SpanExporter sdktrace.SpanExporter
}

// Telemetry holds a process's providers. Its zero value is not usable:
// get one from New.
type Telemetry struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Propagator carries trace context across HTTP, gRPC and Temporal
	// headers: W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	metrics    http.Handler
	shutdown   []func(context.Context) error
}

// New builds the providers cfg and the environment ask for.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	t := &Telemetry{
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  metricnoop.NewMeterProvider(),
		Propagator:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	name := cfg.ServiceName
	if name == "" {
		name = "agentree"
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", name)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}

	spans := cfg.SpanExporter
	var spanOpt sdktrace.TracerProviderOption
	if spans != nil {
		spanOpt = sdktrace.WithSyncer(spans)
	} else if spans, err = otlpSpanExporter(ctx); err != nil {
		return nil, err
	} else if spans != nil {
		spanOpt = sdktrace.WithBatcher(spans)
	}
	if spanOpt != nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), spanOpt)
		t.TracerProvider = tp
		t.shutdown = append(t.shutdown, tp.Shutdown)
	}

	var readers []sdkmetric.Option
	if cfg.Metrics {
		reg := prometheus.NewRegistry()
		// The Go runtime's and the process's own figures (go_goroutines,
		// process_resident_memory_bytes, process_open_fds, …): what an
		// operator watches for a leak over hours (`make soak` samples
		// them), and what no OpenTelemetry instrument here records.
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := promexporter.New(promexporter.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(exp))
		t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	if reader, err := otlpMetricReader(ctx); err != nil {
		return nil, err
	} else if reader != nil {
		readers = append(readers, sdkmetric.WithReader(reader))
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		t.MeterProvider = mp
		t.shutdown = append(t.shutdown, mp.Shutdown)
	}
	return t, nil
}

// SetGlobal makes t's providers OpenTelemetry's globals, so libraries that
// use the globals join the same traces. A process calls it once; tests
// leave the globals alone so their spans stay apart.
func (t *Telemetry) SetGlobal() {
	otel.SetTracerProvider(t.TracerProvider)
	otel.SetMeterProvider(t.MeterProvider)
	otel.SetTextMapPropagator(t.Propagator)
}

// MetricsHandler serves the Prometheus text format; nil when Config.Metrics
// was off.
func (t *Telemetry) MetricsHandler() http.Handler { return t.metrics }

// Shutdown flushes and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// envSet reports whether any of the environment variables is set.
func envSet(names ...string) bool {
	for _, n := range names {
		if os.Getenv(n) != "" {
			return true
		}
	}
	return false
}

// protocol is the OTLP protocol for a signal ("traces", "metrics"):
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else the specification's default, http/protobuf.
func protocol(signal string) string {
	for _, n := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return "http/protobuf"
}
