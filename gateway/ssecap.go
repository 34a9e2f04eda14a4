package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// streamSlots caps the SSE streams open at once per API key and per
// organization (issue 36): a stream holds a connection, a goroutine and a
// follower on the hub for as long as the client likes, so without a cap
// one key could hold the gateway's connections for everyone. A stream
// takes a slot of its key and one of its organization before it answers
// 200, and gives both back when it ends, however it ends.
type streamSlots struct {
	perKey, perOrg int
	mu             sync.Mutex
	byKey, byOrg   map[string]int
}

// streamRetryAfter is the Retry-After of a refused stream, in seconds:
// a slot frees when some stream of the key ends, which no one can
// predict, so the client is told to back off a little.
const streamRetryAfter = 5

func newStreamSlots(perKey, perOrg int) *streamSlots {
	return &streamSlots{perKey: perKey, perOrg: perOrg, byKey: map[string]int{}, byOrg: map[string]int{}}
}

// acquire takes a slot of key and of org, or says which cap is reached.
// release must be called once when the stream ends.
func (s *streamSlots) acquire(org, key string) (release func(), refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.byKey[key] >= s.perKey:
		return nil, fmt.Sprintf("this API key has %d streams open, the most it may; close one or retry later", s.perKey)
	case s.byOrg[org] >= s.perOrg:
		return nil, fmt.Sprintf("this organization has %d streams open, the most it may; close one or retry later", s.perOrg)
	}
	s.byKey[key]++
	s.byOrg[org]++
	var once sync.Once
	return func() { once.Do(func() { s.free(org, key) }) }, ""
}

func (s *streamSlots) free(org, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Zero counts are deleted so the maps hold only keys with streams.
	if s.byKey[key]--; s.byKey[key] <= 0 {
		delete(s.byKey, key)
	}
	if s.byOrg[org]--; s.byOrg[org] <= 0 {
		delete(s.byOrg, org)
	}
}

// tooManyStreams is the refusal past a stream cap: 429 with Retry-After
// over HTTP (writeTooManyStreams), RESOURCE_EXHAUSTED over gRPC.
type tooManyStreams struct{ msg string }

func (e *tooManyStreams) Error() string { return e.msg }

// GRPCStatus makes a tooManyStreams a gRPC status of its own.
func (e *tooManyStreams) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.msg)
}

// streamSlot takes a stream slot for the caller's key in orgID; release
// gives it back. Without caps (a service built by hand) it takes nothing.
func (s *service) streamSlot(ctx context.Context, orgID string) (release func(), err error) {
	if s.slots == nil {
		return func() {}, nil
	}
	k, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	release, refused := s.slots.acquire(orgID, k.ID)
	if refused != "" {
		return nil, &tooManyStreams{msg: refused}
	}
	return release, nil
}

// writeTooManyStreams answers err as a 429 if it is a tooManyStreams.
func writeTooManyStreams(w http.ResponseWriter, err error) bool {
	var tm *tooManyStreams
	if !errors.As(err, &tm) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
	writeError(w, http.StatusTooManyRequests, "too_many_streams", tm.msg)
	return true
}
