package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/periodic"
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
	cert, err := o.certificate()
	if err != nil {
		for _, ln := range []net.Listener{o.HTTPListener, o.GRPCListener, o.MetricsListener} {
			if ln != nil {
				_ = ln.Close()
			}
		}
		return err
	}
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHub()
	h := newHub(o.Store, o.Logger)
	closing := make(chan struct{})
	svc := &service{
		es: o.Store, ex: o.Executions, v: newValidator(o),
		log: slog.New(throttled(throttled(o.Logger.Handler(), msgUnreachable, unreachableLogInterval),
			msgTemporalUnreachable, unreachableLogInterval)),
		idempotency: idempotencyConfig{ttl: IdempotencyTTL, lease: o.IdempotencyLease},
		keyEnds:     newKeyEnds(hubCtx),
		streams: &streamer{es: o.Store, hub: h, heartbeat: o.Heartbeat, window: o.ReplayWindow, closing: closing,
			subscribers: o.subscribers()},
		maxTotalSteps:  o.MaxTotalSteps,
		maxBestOf:      o.MaxBestOf,
		mcpCallTimeout: o.MCPCallTimeout,
		windows:        o.ContextWindows,
		explainModel:   o.ExplainModel,
		keys:           newKeyGuard(o),
		tarpit:         newTarpit(o.Tarpit, o.TarpitSlots),
		slots:          newStreamSlots(o.MaxStreamsPerKey, o.MaxStreamsPerOrg),
		pageBytes:      o.PageBytes,
		held:           func(ex entrystore.Execution) conversationStore { return o.Executions.HeldReader(ex) },
	}
	handler, err := newHTTPHandler(svc, o.BodyLimit)
	if err != nil {
		return err
	}
	httpLn, grpcLn, err := listeners(o)
	if err != nil {
		return err
	}
	errc := make(chan error, 3)
	msrv, err := serveMetrics(o, errc)
	if err != nil {
		_ = httpLn.Close()
		if grpcLn != nil {
			_ = grpcLn.Close()
		}
		return err
	}

	hubDone := make(chan struct{})
	go func() { defer close(hubDone); h.run(hubCtx) }()
	pruneDone := make(chan struct{})
	go func() { defer close(pruneDone); prune(hubCtx, o) }()
	srv := &http.Server{
		Handler: o.traced(handler),
		// A client that trickles its headers, or keeps a connection idle,
		// holds one of MaxConns: both are bounded.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	limited := netutil.LimitListener(httpLn, o.MaxConns)
	go func() {
		if cert != nil {
			// ServeTLS with no file names serves TLSConfig's
			// certificate and offers HTTP/2 as well.
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
			errc <- srv.ServeTLS(limited, "", "")
			return
		}
		errc <- srv.Serve(limited)
	}()

	var gs *grpc.Server
	if grpcLn != nil {
		routes, err := loadRoutes()
		if err != nil {
			return err
		}
		gopts := append(svc.grpcInterceptors(routes), grpc.MaxRecvMsgSize(int(o.BodyLimit)), o.grpcTelemetry())
		if cert != nil {
			gopts = append(gopts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})))
		}
		gs = grpc.NewServer(gopts...)
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
	if msrv != nil {
		_ = msrv.Close()
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
	svc.keyEnds.wait()
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

// serveMetrics serves o.MetricsHandler on its own listener, when set.
func serveMetrics(o *Options, errc chan<- error) (*http.Server, error) {
	if o.MetricsHandler == nil {
		if o.MetricsListener != nil {
			_ = o.MetricsListener.Close()
		}
		return nil, nil
	}
	ln := o.MetricsListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.MetricsAddr); err != nil {
			return nil, fmt.Errorf("gateway: metrics: listen %s: %w", o.MetricsAddr, err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.MetricsHandler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: o.IdleTimeout}
	go func() { errc <- srv.Serve(ln) }()
	o.Logger.Info("gateway: metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return srv, nil
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
	periodic.Every(ctx, o.PruneInterval, false, func(ctx context.Context) {
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
	})
}

// certificate loads the TLS pair Options name; nil when they name none.
// It is read before anything listens, so a bad pair fails Run at once.
func (o *Options) certificate() (*tls.Certificate, error) {
	if o.TLSCertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("gateway: TLS certificate: %w", err)
	}
	return &cert, nil
}
