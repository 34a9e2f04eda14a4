package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log sink the gateway writes from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// TestStoreOutageIs503 runs a gateway whose Postgres connections go through
// a proxy, cuts it, and checks that every route answers 503 with
// Retry-After and the same body (not a 500), that the outage is logged
// once per interval rather than once per request, and that the gateway
// answers again once the store is back.
func TestStoreOutageIs503(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	logs := &lockedBuffer{}
	proxy, base := gatewayBehindProxy(t, e, logs, 0)

	execs := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	one := execs + "/00000000-0000-0000-0000-000000000001"
	routes := []struct{ method, path, body string }{
		{"GET", execs, ""},
		{"GET", one, ""},
		{"POST", execs, `{"userPrompt":"hi","models":[{"provider":"scripted","modelId":"m"}]}`},
		{"POST", one + "/signal", `{"signalName":"userMessage","signalValue":{"text":"hi"}}`},
		{"DELETE", one, ""},
		{"GET", one + "/messages", ""},
		{"GET", "/api/orgs/" + e.orgA.Slug + "/agent-definitions", ""},
	}
	send := func(method, path, body string) (int, http.Header, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(raw)
	}
	poll(t, 10*time.Second, func() bool { s, _, _ := send("GET", execs, ""); return s == http.StatusOK }, "the gateway never answered")

	proxy.Cut()
	cutAt := time.Now()
	for range 3 {
		for _, rt := range routes {
			status, hdr, raw := send(rt.method, rt.path, rt.body)
			require.Equal(t, http.StatusServiceUnavailable, status, "%s %s: %s", rt.method, rt.path, raw)
			require.NotEmpty(t, hdr.Get("Retry-After"), "%s %s", rt.method, rt.path)
			require.JSONEq(t, `{"code":"unavailable","message":"the store is unreachable; retry shortly"}`, raw, "%s %s", rt.method, rt.path)
		}
	}
	status, hdr, _ := send("GET", "/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.NotEmpty(t, hdr.Get("Retry-After"))
	status, _, _ = send("GET", "/healthz", "") // liveness asks no database
	require.Equal(t, http.StatusOK, status)
	// 21 failed requests; the gateway logs the outage once per 30 s.
	require.Equal(t, 1+int(time.Since(cutAt)/(30*time.Second)), logs.count("the store is unreachable"), "%s", logs.buf.String())

	proxy.Restore()
	poll(t, 30*time.Second, func() bool { s, _, _ := send("GET", execs, ""); return s == http.StatusOK }, "the gateway never recovered")
	status, _, raw := send("GET", one, "")
	require.Equal(t, http.StatusNotFound, status, raw)
}
