package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// logged keeps the attributes of each record logged.
type logged struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logged) WithGroup(string) slog.Handler            { return l }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
	l.mu.Lock()
	l.recs = append(l.recs, m)
	l.mu.Unlock()
	return nil
}

// TestViolationReportsAreLogged: both report formats browsers send are
// logged in one shape, long fields cut; junk, other methods and floods are
// refused or dropped, never logged as violations.
func TestViolationReportsAreLogged(t *testing.T) {
	log := &logged{}
	h := Handler(slog.New(log))
	post := func(ct, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, ReportPath, strings.NewReader(body))
		r.Header.Set("Content-Type", ct)
		h.ServeHTTP(w, r)
		return w
	}
	w := post("application/csp-report", `{"csp-report":{"document-uri":"http://x/","violated-directive":"img-src","effective-directive":"img-src","blocked-uri":"https://evil.example/p.png","line-number":3}}`)
	require.Equal(t, http.StatusNoContent, w.Code)
	w = post("application/reports+json", `[{"type":"csp-violation","body":{"documentURL":"http://x/","effectiveDirective":"script-src-elem","blockedURL":"inline","sample":"`+strings.Repeat("a", 1000)+`"}},{"type":"deprecation","body":{}}]`)
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Len(t, log.recs, 2)
	require.Equal(t, ViolationMessage, log.recs[0]["msg"])
	require.Equal(t, "img-src", log.recs[0]["directive"])
	require.Equal(t, "https://evil.example/p.png", log.recs[0]["blocked"])
	require.EqualValues(t, 3, log.recs[0]["line"])
	require.Equal(t, "script-src-elem", log.recs[1]["directive"])
	require.Equal(t, "inline", log.recs[1]["blocked"])
	require.Len(t, log.recs[1]["sample"], maxField, "a long field is cut")

	for _, junk := range []string{``, `{}`, `{"csp-report":null}`, `[]`, `[{"type":"deprecation","body":{}}]`, `not json`} {
		w := post("application/json", junk)
		require.Equal(t, http.StatusBadRequest, w.Code, junk)
		var body map[string]string
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, "invalid_argument", body["code"])
	}
	w = post("application/csp-report", `{"csp-report":{"blocked-uri":"`+strings.Repeat("a", maxReport)+`"}}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, ReportPath, nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
	require.Len(t, log.recs, 2, "nothing else was logged")

	// A flood is answered but logged only up to the burst.
	one := `{"csp-report":{"blocked-uri":"https://evil.example/"}}`
	for range 3 * reportBurst {
		require.Equal(t, http.StatusNoContent, post("application/csp-report", one).Code)
	}
	require.Less(t, len(log.recs), 2+2*reportBurst, "the log is not flooded")

	// The page carries the policy that names the endpoint.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	csp := w.Header().Get("Content-Security-Policy")
	for _, d := range []string{"script-src 'self'", "object-src 'none'", "img-src 'self';", "report-uri " + ReportPath} {
		require.Contains(t, csp, d)
	}
	require.True(t, bytes.Contains(w.Body.Bytes(), []byte(`<script src="/ui/markdown.js" defer>`)))
}
