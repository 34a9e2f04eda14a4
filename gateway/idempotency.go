package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/agentree/agentree/entrystore"
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

// idempotentRoute is one route that honours Idempotency-Key. rerun says
// whether the request may be run again when its first attempt died
// without an answer: a create is keyed by the reserved execution ID and a
// cancel is idempotent by nature, but a second signal would be a second
// message.
type idempotentRoute struct {
	method string
	path   *regexp.Regexp
	rerun  bool
}

var idempotentRoutes = []idempotentRoute{
	{http.MethodPost, regexp.MustCompile(`^/api/orgs/([^/]+)/agent-executions$`), true},
	{http.MethodPost, regexp.MustCompile(`^/api/orgs/([^/]+)/agent-executions/[^/]+/signal$`), false},
	{http.MethodDelete, regexp.MustCompile(`^/api/orgs/([^/]+)/agent-executions/[^/]+$`), true},
}

// effectIDKey is the context key of the reserved effect ID.
type effectIDKey struct{}

// effectID is the ID a keyed request's effect must use ("" without a key).
func effectID(ctx context.Context) string {
	id, _ := ctx.Value(effectIDKey{}).(string)
	return id
}

// idempotent implements the Idempotency-Key header on create, signal and
// cancel. The key (per organization) is reserved in Postgres before the
// request runs and its response stored after, so a retry with the same key
// gets the first response (status and body, with Idempotent-Replayed:
// true) and changes nothing; the same key with another request is a 422;
// while the first is still running, a 409.
//
// Crash safety: the reservation is committed before the effect, with an
// effect ID the effect itself uses (a create's execution ID). A gateway
// that dies between the effect and storing the response leaves the key
// reserved; once its lease runs out, a retry takes over and runs the
// request again with the same effect ID, which finds the execution the
// first attempt created instead of creating another. A signal cannot be
// keyed that way (its inbox row's ID is the store's), so a retry that finds
// its first attempt died is refused with 409 rather than risking a second
// message; the first attempt's message, if it was stored, is still
// delivered (a stored inbox row is acted on).
func (s *service) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		org, authed := r.Context().Value(authenticatedOrg{}).(entrystore.Org)
		route, ok := matchIdempotent(r)
		if key == "" || !ok || !authed || !orgMatches(route, r.URL.Path, org) {
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
			writeError(w, http.StatusConflict, "conflict",
				"a request with this Idempotency-Key is still in progress; retry after it has answered")
			return
		case res == entrystore.TakenOver && !route.rerun:
			const msg = "the first request with this Idempotency-Key was interrupted before it answered; list the execution's messages to see whether it was taken"
			s.completeKey(ctx, org.ID, key, rec.EffectID, http.StatusConflict, errorJSON("conflict", msg))
			writeError(w, http.StatusConflict, "conflict", msg)
			return
		}

		rw := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(ctx, effectIDKey{}, rec.EffectID)))
		if rw.status == http.StatusServiceUnavailable || rw.status == http.StatusTooManyRequests {
			// Nothing could be done (the store was out of reach, or a
			// quota refused it until later): the next attempt runs again.
			if err := s.es.ReleaseIdempotencyKey(context.WithoutCancel(ctx), org.ID, key, rec.EffectID); err != nil {
				s.log.Warn("gateway: release idempotency key", "err", err)
			}
		} else {
			s.completeKey(ctx, org.ID, key, rec.EffectID, rw.status, rw.body.Bytes())
		}
		for k, v := range rw.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rw.status)
		_, _ = w.Write(rw.body.Bytes())
	})
}

// completeKey stores a response for its key. If that fails the key stays
// reserved and a retry after the lease re-runs a re-runnable request (the
// same effect ID) or is refused: never a second effect.
func (s *service) completeKey(ctx context.Context, orgID, key, effect string, status int, body []byte) {
	if err := s.es.CompleteIdempotencyKey(context.WithoutCancel(ctx), orgID, key, effect, status, body); err != nil {
		s.log.Warn("gateway: store idempotent response", "err", err)
	}
}

// matchIdempotent finds the route of a request that honours the header.
func matchIdempotent(r *http.Request) (idempotentRoute, bool) {
	for _, rt := range idempotentRoutes {
		if r.Method == rt.method && rt.path.MatchString(r.URL.Path) {
			return rt, true
		}
	}
	return idempotentRoute{}, false
}

// orgMatches reports whether the path names the authenticated organization;
// another one answers 404 unrecorded.
func orgMatches(rt idempotentRoute, path string, org entrystore.Org) bool {
	m := rt.path.FindStringSubmatch(path)
	return len(m) > 1 && (m[1] == org.Slug || strings.EqualFold(m[1], org.ID))
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
