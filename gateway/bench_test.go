package gateway_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// BenchmarkTokenToSSE measures a token's way from the worker to a browser:
// AppendStreamEvent on the worker's own pool (insert + NOTIFY), the
// gateway's LISTEN connection, its table read and fan-out, and the SSE
// client reading the event off a real TCP connection. It reports the p50
// and p99 latency in milliseconds (targets: 20 and 100).
func BenchmarkTokenToSSE(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, envOptions{noTemporal: true})
	id := e.newRow()
	worker := entrystore.New(newPool(b, e.dbURL))
	s := e.openStream(b, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated", "")
	token := []byte(`{"agentExecutionId":"bench","data":"tok "}`)
	// Warm up: the first event also proves the LISTEN connection is up.
	_, err := worker.AppendStreamEvent(ctx, e.orgA.ID, id, "token", token)
	require.NoError(b, err)
	_, ok := s.next(b, 30*time.Second)
	require.True(b, ok)

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		ev, err := worker.AppendStreamEvent(ctx, e.orgA.ID, id, "token", token)
		if err != nil {
			b.Fatal(err)
		}
		got, ok := s.next(b, 10*time.Second)
		if !ok || got.ID != ev.ID {
			b.Fatalf("published %d, received %+v (stream open: %v)", ev.ID, got, ok)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
