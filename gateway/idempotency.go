package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// IdempotencyTTL is how long the first response to a request with an
// Idempotency-Key is kept and replayed to retries; the same key later is a
// new request.
const IdempotencyTTL = 24 * time.Hour

// idempotencyLease is how long a request holds its key before a retry may
// take over: longer than commitTimeout, so a live request is never taken
// over, only one whose gateway died.
const idempotencyLease = commitTimeout + 30*time.Second

// maxIdempotencyKey bounds the header's length (UUIDs and ULIDs fit easily).
const maxIdempotencyKey = 255

type idempotencyConfig struct {
	ttl, lease time.Duration
}

// effectIDKey is the context key of the reserved effect ID.
type effectIDKey struct{}

// effectID is the ID a keyed request's effect must use ("" without a key).
func effectID(ctx context.Context) string {
	id, _ := ctx.Value(effectIDKey{}).(string)
	return id
}

// idempotent implements the Idempotency-Key header on every route whose
// RPC declares an idempotency (access.proto; permit found the route). The
// key (per organization) is reserved in Postgres before the request runs
// and its response stored after, so a retry with the same key gets the
// first response (status and body, with Idempotent-Replayed: true) and
// changes nothing; the same key with another request is a 422; while the
// first is still running, a 409 with Retry-After.
//
// Crash safety: the reservation is committed before the effect, with an
// effect ID the effect itself uses (a created, forked or resumed
// execution's ID, a signal's inbox row ID). A gateway that dies between
// the effect and storing the response leaves the key reserved; once its
// lease runs out, a retry takes over and, on a route declared
// IDEMPOTENCY_RERUN, runs the request again with the same effect ID, which
// finds what the first attempt did instead of doing it again, and answers
// as the first would have. A route declared IDEMPOTENCY_REPLAY (its effect
// cannot be keyed) refuses such a retry with 409 rather than risk a second
// effect.
func (s *service) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		org, authed := r.Context().Value(authenticatedOrg{}).(entrystore.Org)
		route, segs, ok := routeOf(r.Context())
		if key == "" || !ok || !authed || route.Idempotency == pb.Idempotency_IDEMPOTENCY_UNSPECIFIED ||
			!orgMatches(route.orgOf(segs), org) {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > maxIdempotencyKey || strings.TrimSpace(key) != key {
			writeError(w, http.StatusBadRequest, "invalid_argument",
				"Idempotency-Key must be 1 to 255 characters without surrounding spaces")
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_argument", "reading the request body failed")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
		fp := hex.EncodeToString(sum[:])

		ctx := r.Context()
		reserved := time.Now()
		rec, res, err := s.es.ReserveIdempotencyKey(ctx, org.ID, key, fp, s.idempotency.lease, s.idempotency.ttl)
		if err != nil {
			writeStatus(w, toStatus(s.log, "reserve idempotency key", err))
			return
		}
		switch {
		case rec.Fingerprint != fp:
			writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reused",
				"this Idempotency-Key was used for a different request (another route or body); use a new key for a new request")
			return
		case res == entrystore.Completed:
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Status)
			_, _ = w.Write(rec.Body)
			return
		case res == entrystore.InFlight:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusConflict, "conflict",
				"a request with this Idempotency-Key is still in progress; retry after it has answered")
			return
		case res == entrystore.TakenOver && route.Idempotency != pb.Idempotency_IDEMPOTENCY_RERUN:
			const msg = "the first request with this Idempotency-Key was interrupted before it answered, and this request cannot safely run twice; check whether it took effect before sending it again with a new key"
			s.completeKey(ctx, reserved, org.ID, key, rec.EffectID, http.StatusConflict, errorJSON("conflict", msg))
			writeError(w, http.StatusConflict, "conflict", msg)
			return
		}

		rw := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(ctx, effectIDKey{}, rec.EffectID)))
		if rw.status == http.StatusServiceUnavailable || rw.status == http.StatusTooManyRequests {
			// Nothing could be done (the store was out of reach, or a
			// quota refused it until later): the next attempt runs again.
			s.endKey(ctx, "release idempotency key", reserved, func(ctx context.Context) error {
				return s.es.ReleaseIdempotencyKey(ctx, org.ID, key, rec.EffectID)
			})
		} else {
			stored := rw.body.Bytes()
			if route.SecretResponse {
				stored = withoutSecret(stored)
			}
			s.completeKey(ctx, reserved, org.ID, key, rec.EffectID, rw.status, stored)
		}
		for k, v := range rw.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rw.status)
		_, _ = w.Write(rw.body.Bytes())
	})
}

// completeKey stores a response for its key, tried again while the store
// refuses it (endKey). Should it never be stored the key stays reserved,
// and a retry after the lease re-runs a re-runnable request (the same
// effect ID) or is refused: never a second effect.
func (s *service) completeKey(ctx context.Context, reserved time.Time, orgID, key, effect string, status int, body []byte) {
	s.endKey(ctx, "store idempotent response", reserved, func(ctx context.Context) error {
		return s.es.CompleteIdempotencyKey(ctx, orgID, key, effect, status, body)
	})
}

// orgMatches reports whether the path's organization is the authenticated
// one; another one answers 404 unrecorded.
func orgMatches(named string, org entrystore.Org) bool {
	return named == org.Slug || strings.EqualFold(named, org.ID)
}

// withoutSecret is a response body without its top-level "secret": a new
// key's secret is shown once and never stored, so a replay answers with
// the key alone.
func withoutSecret(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	if _, ok := m["secret"]; !ok {
		return body
	}
	delete(m, "secret")
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

// errorJSON is an error body as writeError writes it.
func errorJSON(kind, msg string) []byte {
	b, _ := json.Marshal(errorBody{Code: kind, Message: msg}) // two strings cannot fail
	return append(b, '\n')
}

// recorder buffers a (small, JSON) response so it can be stored before it
// is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.status = code }
