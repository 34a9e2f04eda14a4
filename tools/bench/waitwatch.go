package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentree/agentree/entrystore"
)

// waitWatcher watches Agentree executions for WAITING with a checkpoint
// past a given one, as a client of the product's own notifications does
// (the gateway's SSE hub): one connection LISTENs on the store's stream
// channel (entrystore.ListenStream), and a notification of an awaited
// execution has its row read. A move to WAITING commits with its
// agent.waiting event, so a notification follows every wait; the rows of
// everything awaited are read again every second, and after a
// (re)connection, in case one was missed. (Until 2026-11-28 the bench read
// every awaited row every 10 ms: about a tenth of Postgres's statement
// time in a concurrent run, charged to Agentree.)
type waitWatcher struct {
	b      *bench
	mu     sync.Mutex
	after  map[string]int   // awaited: the checkpoint to pass
	got    map[string]int   // reached: the checkpoint
	failed map[string]error // ended instead
	dirty  map[string]bool  // awaited, to read
	wake   chan struct{}    // dirty has entries
	// settled is closed when its execution is reached or ended: each
	// awaiting goroutine wakes for its own execution alone, not for
	// every read (200 of them woken at each read cost the bench's
	// process a second and a half of CPU a concurrent run, taken from the
	// 2 cores the systems share).
	settled map[string]chan struct{}
}

func newWaitWatcher(b *bench) *waitWatcher {
	return &waitWatcher{b: b, after: map[string]int{}, got: map[string]int{}, failed: map[string]error{},
		dirty: map[string]bool{}, wake: make(chan struct{}, 1), settled: map[string]chan struct{}{}}
}

// run listens and reads until ctx ends.
func (w *waitWatcher) run(ctx context.Context) {
	go w.listen(ctx)
	sweep := time.NewTicker(time.Second)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			w.markAll()
			continue
		case <-w.wake:
		}
		w.mu.Lock()
		ids := make([]string, 0, len(w.dirty))
		for id := range w.dirty {
			ids = append(ids, id)
		}
		clear(w.dirty)
		w.mu.Unlock()
		if len(ids) > 0 {
			w.read(ctx, ids)
		}
	}
}

// listen marks awaited executions dirty as their notifications arrive,
// and all of them after each (re)connection.
func (w *waitWatcher) listen(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, w.b.store.Pool().Config().ConnConfig.Copy())
		if err == nil {
			err = entrystore.ListenStream(ctx, conn)
		}
		if err == nil {
			w.markAll()
		}
		for err == nil {
			var n *pgconn.Notification
			if n, err = conn.WaitForNotification(ctx); err == nil {
				if id, _, ok := entrystore.ParseStreamNotification(n.Payload); ok {
					w.mark(id)
				}
			}
		}
		if conn != nil {
			_ = conn.Close(context.WithoutCancel(ctx))
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// mark queues id for a read when it is awaited.
func (w *waitWatcher) mark(id string) {
	w.mu.Lock()
	_, awaited := w.after[id]
	if awaited {
		w.dirty[id] = true
	}
	w.mu.Unlock()
	if awaited {
		w.poke()
	}
}

// markAll queues every awaited execution for a read.
func (w *waitWatcher) markAll() {
	w.mu.Lock()
	for id := range w.after {
		w.dirty[id] = true
	}
	w.mu.Unlock()
	w.poke()
}

func (w *waitWatcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// read reads the rows of ids and settles those that waited or ended.
func (w *waitWatcher) read(ctx context.Context, ids []string) {
	rows, err := w.b.store.Pool().Query(ctx,
		`SELECT id::text, status, current_checkpoint_seq FROM agent_execution WHERE id = ANY($1::uuid[])`, ids)
	if err != nil {
		return // ctx ended, or a blip: the next second's read asks again
	}
	defer rows.Close()
	var id, status string
	var seq int
	w.mu.Lock()
	defer w.mu.Unlock()
	for rows.Next() {
		if rows.Scan(&id, &status, &seq) != nil {
			continue
		}
		after, awaited := w.after[id]
		switch {
		case !awaited:
		case status == "WAITING" && seq > after:
			w.got[id] = seq
			w.settle(id)
		case status == "COMPLETED" || status == "FAILED" || status == "CANCELLED" || status == "PAUSED":
			w.failed[id] = fmt.Errorf("the execution ended %s", status)
			w.settle(id)
		}
	}
}

// settle ends id's wait (w.mu held): it is no longer awaited, and its
// awaiting goroutine wakes.
func (w *waitWatcher) settle(id string) {
	delete(w.after, id)
	if ch, ok := w.settled[id]; ok {
		close(ch)
		delete(w.settled, id)
	}
}

// await returns the checkpoint of id's next wait after checkpoint after.
func (w *waitWatcher) await(ctx context.Context, id string, after int) (int, error) {
	settled := make(chan struct{})
	w.mu.Lock()
	delete(w.got, id)
	w.after[id] = after
	w.settled[id] = settled
	w.dirty[id] = true // it may have waited before this call
	w.mu.Unlock()
	w.poke()
	select {
	case <-ctx.Done():
		w.mu.Lock()
		delete(w.after, id)
		delete(w.settled, id)
		w.mu.Unlock()
		return after, fmt.Errorf("waiting for WAITING: %w", ctx.Err())
	case <-settled:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if seq, ok := w.got[id]; ok {
		return seq, nil
	}
	return after, w.failed[id]
}
