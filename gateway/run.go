package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// shutdownGrace is how long in-flight requests get once Run's context
// ends; streams end at once.
const shutdownGrace = 5 * time.Second

// Run serves the gateway until ctx ends (then it shuts down and returns
// nil) or a listener fails.
func Run(ctx context.Context, opts Options) error {
	o, err := opts.validate()
	if err != nil {
		return err
	}
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHub()
	h := newHub(o.Store, o.Logger)
	closing := make(chan struct{})
	svc := &service{
		es: o.Store, ex: o.Executions, v: newValidator(o),
		log:         slog.New(throttled(o.Logger.Handler(), msgUnreachable, unreachableLogInterval)),
		idempotency: idempotencyConfig{ttl: IdempotencyTTL, lease: idempotencyLease},
		streams: &streamer{es: o.Store, hub: h, heartbeat: o.Heartbeat, window: o.ReplayWindow, closing: closing,
			subscribers: o.subscribers()},
		maxTotalSteps: o.MaxTotalSteps,
		windows:       o.ContextWindows,
	}
	handler, err := newHTTPHandler(svc, o.BodyLimit, o.MetricsHandler)
	if err != nil {
		return err
	}
	httpLn, grpcLn, err := listeners(o)
	if err != nil {
		return err
	}

	hubDone := make(chan struct{})
	go func() { defer close(hubDone); h.run(hubCtx) }()
	pruneDone := make(chan struct{})
	go func() { defer close(pruneDone); prune(hubCtx, o) }()
	errc := make(chan error, 2)
	srv := &http.Server{
		Handler:           o.traced(handler),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	go func() { errc <- srv.Serve(httpLn) }()
	var gs *grpc.Server
	if grpcLn != nil {
		gs = grpc.NewServer(grpc.MaxRecvMsgSize(int(o.BodyLimit)), o.grpcTelemetry())
		pb.RegisterAgentServiceServer(gs, svc)
		go func() { errc <- gs.Serve(grpcLn) }()
	}
	o.Logger.Info("gateway: serving", "http", httpLn.Addr().String(), "grpc", addrOf(grpcLn))

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
		runErr = fmt.Errorf("gateway: serve: %w", runErr)
	}
	close(closing) // streams end; their connections go idle
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if gs != nil {
		stopped := make(chan struct{})
		go func() { gs.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-sctx.Done():
			gs.Stop()
		}
	}
	stopHub()
	<-hubDone
	<-pruneDone
	if errors.Is(runErr, http.ErrServerClosed) || errors.Is(runErr, grpc.ErrServerStopped) {
		runErr = nil
	}
	return runErr
}

// listeners opens what Options ask for; the gRPC one may be nil.
func listeners(o *Options) (httpLn, grpcLn net.Listener, err error) {
	httpLn = o.HTTPListener
	if httpLn == nil {
		if httpLn, err = net.Listen("tcp", o.HTTPAddr); err != nil {
			return nil, nil, fmt.Errorf("gateway: listen %s: %w", o.HTTPAddr, err)
		}
	}
	grpcLn = o.GRPCListener
	if grpcLn == nil && o.GRPCAddr != "" {
		if grpcLn, err = net.Listen("tcp", o.GRPCAddr); err != nil {
			_ = httpLn.Close()
			return nil, nil, fmt.Errorf("gateway: listen %s: %w", o.GRPCAddr, err)
		}
	}
	return httpLn, grpcLn, nil
}

func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// prune keeps agent_stream_event to the replay window (what no stream may
// replay any more is deleted) and drops expired idempotency keys.
func prune(ctx context.Context, o *Options) {
	if o.PruneInterval < 0 {
		return
	}
	tick := time.NewTicker(o.PruneInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := o.Store.PruneStreamEvents(ctx, time.Now().Add(-o.ReplayWindow))
		if err != nil && ctx.Err() == nil {
			o.Logger.Warn("gateway: prune stream events", "err", err)
		} else if n > 0 {
			o.Logger.Debug("gateway: pruned stream events", "count", n)
		}
		// Expired keys already count as new (ReserveIdempotencyKey);
		// this only keeps the table small.
		if n, err := o.Store.PruneIdempotencyKeys(ctx); err != nil && ctx.Err() == nil {
			o.Logger.Warn("gateway: prune idempotency keys", "err", err)
		} else if n > 0 {
			o.Logger.Debug("gateway: pruned idempotency keys", "count", n)
		}
	}
}
