package providertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reply is one scripted answer of a Server.
type Reply struct {
	// Status is the HTTP status; 0 = 200.
	Status int
	// Header is added to the answer. Content-Type defaults to
	// text/event-stream for a 200 and application/json otherwise.
	Header map[string]string
	// Body is written as is: an event stream or an error document.
	Body string
	// Break drops the connection after Body without ending the chunked
	// response, which is what a stream cut by the network looks like to
	// the client.
	Break bool
}

// Request is what a Server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Field returns the compact JSON of the body's top-level key, "" when the
// key is absent, for require.JSONEq.
func (r Request) Field(t testing.TB, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &m), "request body: %s", r.Body)
	v, ok := m[key]
	if !ok {
		return ""
	}
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, v))
	return b.String()
}

// Server is a fake model API: it answers requests with its replies in
// order and records them. It is closed when the test ends.
type Server struct {
	URL string

	t        testing.TB
	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a Server that answers with replies, in order.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// Close stops the server; later calls to URL find nothing listening.
func (s *Server) Close() { s.srv.Close() }

// Push queues more replies.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the latest request; the test fails if there is none.
func (s *Server) Last() Request {
	s.t.Helper()
	reqs := s.Requests()
	require.NotEmpty(s.t, reqs, "the fake server received no request")
	return reqs[len(reqs)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("providertest: read request: %v", err)
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var reply Reply
	ok := len(s.replies) > 0
	if ok {
		reply, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("providertest: no reply scripted for %s %s", r.Method, r.URL.Path)
		reply = Reply{Status: http.StatusTeapot, Body: `{"error":{"message":"no reply scripted"}}`}
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply.Body)
	if reply.Break {
		// Flush what was written, then abort: the server closes the
		// connection without the chunked terminator.
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}
