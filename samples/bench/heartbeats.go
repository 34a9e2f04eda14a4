package main

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"
)

// heartbeatCounter counts the activity heartbeats a client's workers send
// that reach the server: the SDK throttles an activity's heartbeats, and
// Temporal Cloud bills each one sent as an action. They are not in
// history, so they are counted where they leave the process, at the gRPC
// call.
type heartbeatCounter struct {
	n atomic.Int64
	// on, when set, learns of each heartbeat sent (a worker process logs
	// it).
	on func(n int64)
}

// dial adds the counter to a client's connection.
func (h *heartbeatCounter) dial(o *client.Options) {
	o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, opts...)
			// RecordActivityTaskHeartbeat and its ById form.
			if err == nil && strings.HasPrefix(path.Base(method), "RecordActivityTaskHeartbeat") {
				n := h.n.Add(1)
				if h.on != nil {
					h.on(n)
				}
			}
			return err
		}))
}

// count is the heartbeats sent so far.
func (h *heartbeatCounter) count() int64 {
	if h == nil {
		return 0
	}
	return h.n.Load()
}

// errorLog is a Temporal client's logger that keeps the last error its
// worker logged: why a workflow whose tasks keep failing is stuck (a
// completion the server refuses says so only in the worker's log).
type errorLog struct {
	tlog.Logger
	mu   sync.Mutex
	last string
}

// Error implements log.Logger.
func (l *errorLog) Error(msg string, kv ...any) {
	s := msg
	for i := 0; i+1 < len(kv); i += 2 {
		if k, _ := kv[i].(string); k == "Error" {
			s += ": " + fmt.Sprint(kv[i+1])
		}
	}
	l.mu.Lock()
	l.last = s
	l.mu.Unlock()
	l.Logger.Error(msg, kv...)
}

// lastError is the last error logged, at most 300 bytes of it.
func (l *errorLog) lastError() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.last) > 300 {
		return l.last[:300] + "…"
	}
	return l.last
}
