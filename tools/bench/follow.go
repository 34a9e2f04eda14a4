package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// workerLog follows a worker process's log (workerSpec.Log) as it grows,
// reading only what was appended since its last look: the concurrent
// scenario's processes write thousands of lines, which child.await, that
// reads the whole file each time, would read again and again.
type workerLog struct {
	path string

	mu      sync.Mutex
	off     int64
	partial []byte
	// at[event][plan ID][step] is when it happened (the first time).
	at      map[string]map[string]map[int]time.Time
	changed chan struct{} // closed and replaced when lines arrive
	err     error
}

func newWorkerLog(path string) *workerLog {
	return &workerLog{path: path, at: map[string]map[string]map[int]time.Time{}, changed: make(chan struct{})}
}

// follow reads what is appended every interval until ctx ends.
func (l *workerLog) follow(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := l.read(); err != nil {
			l.mu.Lock()
			l.err = err
			close(l.changed)
			l.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// read takes in the lines appended since the last read.
func (l *workerLog) read() error {
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	l.mu.Lock()
	off := l.off
	l.mu.Unlock()
	b, err := io.ReadAll(io.NewSectionReader(f, off, 1<<40))
	if err != nil || len(b) == 0 {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.off += int64(len(b))
	b = append(l.partial, b...)
	last := bytes.LastIndexByte(b, '\n')
	l.partial = append([]byte(nil), b[last+1:]...)
	if last < 0 {
		return nil
	}
	for _, line := range strings.Split(string(b[:last]), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			return fmt.Errorf("bench: worker log line %q", line)
		}
		step, err1 := strconv.Atoi(f[2])
		ns, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bench: worker log line %q", line)
		}
		if l.at[f[0]] == nil {
			l.at[f[0]] = map[string]map[int]time.Time{}
		}
		if l.at[f[0]][f[1]] == nil {
			l.at[f[0]][f[1]] = map[int]time.Time{}
		}
		if _, seen := l.at[f[0]][f[1]][step]; !seen {
			l.at[f[0]][f[1]][step] = time.Unix(0, ns)
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

// await waits until the log records event for plan and step.
func (l *workerLog) await(ctx context.Context, event, planID string, step int) (time.Time, error) {
	for {
		l.mu.Lock()
		t, ok := l.at[event][planID][step]
		changed, err := l.changed, l.err
		l.mu.Unlock()
		switch {
		case ok:
			return t, nil
		case err != nil:
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("bench: waiting for %s %s %d in the worker's log: %w", event, planID, step, ctx.Err())
		case <-changed:
		}
	}
}

// times are the times of event for each of the plan's steps.
func (l *workerLog) times(event, planID string) map[int]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int]time.Time{}
	for step, t := range l.at[event][planID] {
		out[step] = t
	}
	return out
}
