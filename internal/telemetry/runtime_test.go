package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// TestMetricsCarryRuntimeFigures: the /metrics handler reports the
// process's goroutines, resident memory and open file descriptors, the
// figures a leak shows in (make soak samples them from a worker and a
// gateway).
func TestMetricsCarryRuntimeFigures(t *testing.T) {
	tel, err := New(t.Context(), Config{Metrics: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(t.Context()) })
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "process_open_fds"} {
		f, ok := families[name]
		require.True(t, ok, "%s missing", name)
		require.NotEmpty(t, f.GetMetric(), name)
		require.Positive(t, f.GetMetric()[0].GetGauge().GetValue(), name)
	}
}
