package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentree/agentree/internal/telemetry"
)

func TestJSONLogCarriesTraceID(t *testing.T) {
	var buf bytes.Buffer
	log, err := telemetry.NewLogger(&buf, "json", slog.LevelInfo)
	require.NoError(t, err)
	ctx, span := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "op")
	defer span.End()
	log.With("ExecutionID", "e1").InfoContext(ctx, "segment")
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.Equal(t, span.SpanContext().TraceID().String(), line["trace_id"])
	require.Equal(t, "e1", line["ExecutionID"])

	_, err = telemetry.NewLogger(&buf, "xml", slog.LevelInfo)
	require.Error(t, err)
}
