package mcp

import (
	"bytes"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inherited are the worker's variables a stdio server sees, besides its
// own Env: enough to find programs and a home, nothing secret.
var inherited = []string{"PATH", "HOME", "LANG", "TMPDIR", "TZ"}

// terminateWait is how long closing a stdio session waits for the process
// to exit once its stdin is closed, before signalling it.
const terminateWait = 2 * time.Second

// transport builds the server's transport; proc is the stdio process it
// will start, nil for HTTP.
func (s *server) transport() (t sdk.Transport, proc *exec.Cmd) {
	if s.cfg.URL != "" {
		return &sdk.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: &http.Client{Transport: headers{base: http.DefaultTransport, h: s.cfg.Headers}},
			// Nothing the server would push unasked is used: calls and
			// their answers are enough.
			DisableStandaloneSSE: true,
		}, nil
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
	}
	cmd.Stderr = &lineLog{log: s.log}
	// A child holding stderr open must not keep Wait, and so Close, from
	// returning.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, cmd
}

// headers adds the server's configured headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) == 0 {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// lineLog logs what a stdio server writes to stderr, a line at a time.
type lineLog struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

// maxLine is where a line with no end is cut and logged anyway.
const maxLine = 4096

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) < maxLine {
			return len(p), nil
		}
		if i < 0 || i > maxLine {
			i = maxLine
		}
		l.log.Info("MCP server stderr", "line", string(bytes.TrimRight(l.buf[:i], "\r\n")))
		l.buf = append(l.buf[:0], l.buf[min(i+1, len(l.buf)):]...)
	}
}
