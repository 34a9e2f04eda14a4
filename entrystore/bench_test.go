package entrystore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// BenchmarkPath10k loads the path of the leaf of a 10,000-entry chain: the
// read every model call makes. The chain is built once, outside the timer.
func BenchmarkPath10k(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	const n = 10_000
	leaf := f.chain(b, n)
	_, err := f.store.Pool().Exec(ctx, "VACUUM ANALYZE agent_entry")
	require.NoError(b, err)
	// One call outside the timer prepares the statement, as a long-running
	// worker's connections have; b.Loop starts timing at its first call.
	path, err := f.store.Path(ctx, f.org.ID, leaf.ID)
	require.NoError(b, err)
	require.Len(b, path, n)
	require.Equal(b, leaf, path[n-1])

	for b.Loop() {
		path, err := f.store.Path(ctx, f.org.ID, leaf.ID)
		if err != nil || len(path) != n {
			b.Fatalf("path: %d entries, %v", len(path), err)
		}
	}
}

// BenchmarkAppend appends entries one after another to one execution, each
// with its own idempotency key and the previous entry as parent.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	parent := f.append(b, "", "warm-up").ID // prepares the statement, outside the timer
	i := 0
	var start time.Time
	for b.Loop() {
		if i == 0 {
			start = time.Now()
		}
		e, _, err := f.store.AppendEntry(ctx, entrystore.Entry{
			OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent,
			Type: "message", Role: "user", Content: []byte(`{"text":"hello"}`),
			IdempotencyKey: fmt.Sprintf("%s/0/%d", f.exec.ID, i),
		})
		if err != nil {
			b.Fatal(err)
		}
		parent = e.ID
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "entries/s")
}

// BenchmarkPutContent1MB stores the same 1 MB blob over and over: the first
// call writes it, the rest find it and write nothing.
func BenchmarkPutContent1MB(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	sha, created, err := f.store.PutContent(ctx, f.org.ID, data, "application/octet-stream")
	require.NoError(b, err)
	require.True(b, created)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, created, err := f.store.PutContent(ctx, f.org.ID, data, ""); err != nil || created {
			b.Fatalf("put content: created=%v err=%v", created, err)
		}
	}
	b.StopTimer()
	size, err := f.store.ContentSize(ctx, f.org.ID, sha)
	require.NoError(b, err)
	require.Equal(b, int64(len(data)), size)
	var rows int
	require.NoError(b, f.store.Pool().QueryRow(ctx, "SELECT count(*) FROM content").Scan(&rows))
	require.Equal(b, 1, rows)
}
