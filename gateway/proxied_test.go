package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/netfault"
)

// gatewayBehindProxy runs a gateway without Temporal whose Postgres pool
// and LISTEN connection reach e's database through a fault proxy — cut it,
// and from the gateway's side Postgres is gone — logging to logs, with SSE
// heartbeats every heartbeat (0: the default). It returns the proxy and
// the gateway's base URL; both stop with the test.
func gatewayBehindProxy(t *testing.T, e *env, logs io.Writer, heartbeat time.Duration) (*netfault.Proxy, string) {
	t.Helper()
	u, err := url.Parse(e.dbURL)
	require.NoError(t, err)
	proxy, err := netfault.Listen(u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	u.Host = proxy.Addr()
	store := entrystore.New(newPool(t, u.String()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- gateway.Run(ctx, gateway.Options{
			HTTPListener: ln, Store: store, Executions: aclient.NewClient(nil, store, "proxied-test"),
			PruneInterval: -1, Heartbeat: heartbeat, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return proxy, "http://" + ln.Addr().String()
}
