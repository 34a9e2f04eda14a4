package entrystore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

func batchOf(prefix string, n int) []entrystore.NewStreamEvent {
	out := make([]entrystore.NewStreamEvent, n)
	for i := range out {
		out[i] = entrystore.NewStreamEvent{Event: "token", Data: json.RawMessage(fmt.Sprintf(`{"data":"%s-%d"}`, prefix, i))}
	}
	return out
}

func dataOf(t *testing.T, ev entrystore.StreamEvent) string {
	t.Helper()
	var d struct{ Data string }
	require.NoError(t, json.Unmarshal(ev.Data, &d))
	return d.Data
}

// A batch is one statement: its events get increasing IDs in the order
// given, and the schema's channel hears of it once, with its first ID.
func TestAppendStreamEventsIsOneOrderedWriteWithOneNotification(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	conn, err := pgx.ConnectConfig(ctx, f.store.Pool().Config().ConnConfig)
	require.NoError(t, err)
	defer conn.Close(ctx)
	channel, err := entrystore.NotifyChannel(ctx, conn)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize())
	require.NoError(t, err)

	in := batchOf("a", 100)
	in[50] = entrystore.NewStreamEvent{Event: "data"} // no data: an empty object
	evs, err := f.store.AppendStreamEvents(ctx, f.org.ID, f.exec.ID, in)
	require.NoError(t, err)
	require.Len(t, evs, len(in))
	for i, ev := range evs {
		require.Equal(t, in[i].Event, ev.Event)
		if i > 0 {
			require.Greater(t, ev.ID, evs[i-1].ID, "IDs increase in the order given")
		}
		if i != 50 {
			require.Equal(t, fmt.Sprintf("a-%d", i), dataOf(t, ev))
		}
	}
	require.JSONEq(t, `{}`, string(evs[50].Data))
	stored, err := f.store.StreamEventsAfter(ctx, f.org.ID, f.exec.ID, 0, 500)
	require.NoError(t, err)
	require.Equal(t, evs, stored)

	// A single event after the batch: the next notification of the
	// execution is its, so the batch sent exactly one.
	last, err := f.store.AppendStreamEvent(ctx, f.org.ID, f.exec.ID, "agent.completed", nil)
	require.NoError(t, err)
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < 2 {
		n, err := conn.WaitForNotification(waitCtx)
		require.NoError(t, err)
		if strings.HasPrefix(n.Payload, f.exec.ID+":") {
			got = append(got, n.Payload)
		}
	}
	require.Equal(t, []string{fmt.Sprintf("%s:%d", f.exec.ID, evs[0].ID), fmt.Sprintf("%s:%d", f.exec.ID, last.ID)}, got)
}

// Batches written at once to one execution never interleave: each is one
// run of consecutive IDs, and each writer's batches keep its order.
func TestAppendStreamEventsConcurrentBatchesStayWhole(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	const writers, batches, size = 4, 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				if _, err := f.store.AppendStreamEvents(ctx, f.org.ID, f.exec.ID, batchOf(fmt.Sprintf("w%d/b%d", w, b), size)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var all []entrystore.StreamEvent
	for {
		var after int64
		if len(all) > 0 {
			after = all[len(all)-1].ID
		}
		page, err := f.store.StreamEventsAfter(ctx, f.org.ID, f.exec.ID, after, entrystore.MaxPageLimit)
		require.NoError(t, err)
		all = append(all, page...)
		if len(page) < entrystore.MaxPageLimit {
			break
		}
	}
	require.Equal(t, writers*batches*size, len(all))
	nextBatch := map[string]int{}
	for i := 0; i < len(all); i += size {
		first := dataOf(t, all[i])
		prefix, _, _ := strings.Cut(first, "-")
		w, b, _ := strings.Cut(prefix, "/")
		require.Equal(t, fmt.Sprintf("b%d", nextBatch[w]), b, "writer %s's batches in order", w)
		nextBatch[w]++
		for k := range size {
			require.Equal(t, fmt.Sprintf("%s-%d", prefix, k), dataOf(t, all[i+k]), "batch %s is one run, in order", prefix)
		}
	}
}

func TestAppendStreamEventsRejects(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	evs, err := f.store.AppendStreamEvents(ctx, f.org.ID, f.exec.ID, nil)
	require.NoError(t, err, "an empty batch writes nothing")
	require.Empty(t, evs)

	other, err := f.store.CreateOrg(ctx, "other", "Other")
	require.NoError(t, err)
	_, err = f.store.AppendStreamEvents(ctx, other.ID, f.exec.ID, batchOf("x", 2))
	require.True(t, errors.Is(err, entrystore.ErrNotFound), "another organization's execution: %v", err)
	_, err = f.store.AppendStreamEvents(ctx, f.org.ID, f.exec.ID, []entrystore.NewStreamEvent{{Event: "token"}, {}})
	require.True(t, errors.Is(err, entrystore.ErrInvalid), "a nameless event: %v", err)

	stored, err := f.store.StreamEventsAfter(ctx, f.org.ID, f.exec.ID, 0, 10)
	require.NoError(t, err)
	require.Empty(t, stored, "a rejected batch writes none of its events")
}
