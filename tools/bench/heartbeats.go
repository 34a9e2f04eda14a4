package main

import (
	"context"
	"path"
	"strings"
	"sync/atomic"

	"go.temporal.io/sdk/client"
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
