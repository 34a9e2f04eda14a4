package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// keyGuard stands between a bearer token and Postgres. Before it, every
// "Authorization: Bearer <junk>" cost a sha256 and a query on a small pool,
// so a junk flood starved valid clients (issue 36: 22,000 junk requests/s,
// the valid client's p99 ×16). Now:
//
//   - a token not shaped like a key is refused before any hash or query;
//   - lookups are cached by hash for KeyCacheTTL, valid and unknown keys in
//     separate LRUs, so a flood of distinct junk keys evicts only junk; a
//     cached key past its expiry is looked up again (and refused), and one
//     this gateway revokes or expires is forgotten at once, so a key
//     revoked elsewhere (another gateway, the CLI) is refused within
//     KeyCacheTTL, 5 s by default;
//   - a known key spends its own token bucket (KeyRate, KeyBurst);
//   - everything else — no key, a malformed or unknown key, and the lookup
//     of a key not yet cached — spends the client address's bucket
//     (AnonRate, AnonBurst) first, so one address's junk reaches Postgres
//     at most AnonRate times a second whatever it sends.
//
// Without one (tests that build a service by hand) a token's shape is
// checked and the store asked.
type keyGuard struct {
	valid     *lru[[32]byte, resolvedKey]
	unknown   *lru[[32]byte, struct{}]
	perKey    *lru[string, *rate.Limiter]
	perAddr   *lru[string, *rate.Limiter]
	keyRate   rate.Limit
	keyBurst  int
	anonRate  rate.Limit
	anonBurst int
	now       func() time.Time
}

// resolvedKey is a cached successful lookup.
type resolvedKey struct {
	org entrystore.Org
	key entrystore.APIKey
}

// limiterEntries bounds the per-key and per-address bucket maps; an evicted
// bucket comes back full, which costs a flood at most one burst more.
const limiterEntries = 10_000

func newKeyGuard(o *Options) *keyGuard {
	return &keyGuard{
		valid:     newLRU[[32]byte, resolvedKey](o.KeyCacheSize, o.KeyCacheTTL),
		unknown:   newLRU[[32]byte, struct{}](o.KeyCacheSize, o.KeyCacheTTL),
		perKey:    newLRU[string, *rate.Limiter](limiterEntries, 0),
		perAddr:   newLRU[string, *rate.Limiter](limiterEntries, 0),
		keyRate:   rate.Limit(o.KeyRate),
		keyBurst:  o.KeyBurst,
		anonRate:  rate.Limit(o.AnonRate),
		anonBurst: o.AnonBurst,
		now:       time.Now,
	}
}

// rateLimited is the answer past a bucket: 429 with Retry-After over HTTP,
// RESOURCE_EXHAUSTED over gRPC.
type rateLimited struct {
	retryAfter time.Duration
	what       string // "this API key" or "this address"
}

// anonymous is whether the address's bucket ran out (no known key),
// which the tarpit holds; a known key past its own bucket is answered
// at once.
func (e *rateLimited) anonymous() bool { return e.what == addressBucket }

// The buckets' names in a refusal.
const (
	keyBucket     = "this API key"
	addressBucket = "this address"
)

func (e *rateLimited) Error() string {
	return fmt.Sprintf("too many requests from %s; retry in %s", e.what, e.retryAfterHeader()+"s")
}

// retryAfterHeader is the wait in whole seconds, at least one.
func (e *rateLimited) retryAfterHeader() string {
	return strconv.Itoa(max(1, int(math.Ceil(e.retryAfter.Seconds()))))
}

// GRPCStatus makes a rateLimited a gRPC status of its own.
func (e *rateLimited) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.Error())
}

// writeRateLimited answers err as a 429 if it is a rateLimited, after the
// tarpit's delay when the address's bucket ran out.
func (s *service) writeRateLimited(w http.ResponseWriter, r *http.Request, err error) bool {
	var rl *rateLimited
	if !errors.As(err, &rl) {
		return false
	}
	if rl.anonymous() {
		s.tarpit.hold(r.Context())
	}
	w.Header().Set("Retry-After", rl.retryAfterHeader())
	writeError(w, http.StatusTooManyRequests, "rate_limited", rl.Error())
	return true
}

// take spends one token of the bucket named name in m, made with r and b
// on first use; it does not wait.
func (g *keyGuard) take(m *lru[string, *rate.Limiter], name string, r rate.Limit, b int, what string) error {
	now := g.now()
	lim := m.getOrPut(name, now, func() *rate.Limiter { return rate.NewLimiter(r, b) })
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return &rateLimited{retryAfter: time.Second, what: what}
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return &rateLimited{retryAfter: d, what: what}
	}
	return nil
}

// unknownKeyCost is what a lookup that finds no key costs its address's
// bucket, in requests: a client that guesses keys gets one lookup where an
// honest one gets ten, so a flood's share of lookups stays far below 1 %
// even when the tarpit slows it to a few hundred requests a second
// (junk_flood), while a first lookup of a real key costs one.
const unknownKeyCost = 20

// penalize charges addr's bucket for an unknown key: the one token its
// lookup took, plus the rest of unknownKeyCost as debt (a reservation kept),
// so its next lookups wait until the bucket refills.
func (g *keyGuard) penalize(addr string) {
	now := g.now()
	lim := g.perAddr.getOrPut(addr, now, func() *rate.Limiter { return rate.NewLimiter(g.anonRate, g.anonBurst) })
	lim.ReserveN(now, min(unknownKeyCost-1, g.anonBurst))
}

// authenticate resolves an Authorization header from addr (the client's
// IP) to its organization and key, or refuses it: errUnauthenticated, a
// *rateLimited, or the store's failure as a status.
func (s *service) authenticate(ctx context.Context, header, addr string) (entrystore.Org, entrystore.APIKey, error) {
	secret, ok := bearer(header)
	ok = ok && entrystore.WellFormedAPIKey(secret)
	g := s.keys
	if g == nil {
		if !ok {
			return entrystore.Org{}, entrystore.APIKey{}, errUnauthenticated
		}
		return s.lookupKey(ctx, secret)
	}
	var hash [32]byte
	if ok {
		hash = sha256.Sum256([]byte(secret))
		if r, hit := g.valid.get(hash, g.now()); hit && !r.key.Expired(g.now()) {
			if err := g.take(g.perKey, r.key.ID, g.keyRate, g.keyBurst, keyBucket); err != nil {
				return entrystore.Org{}, entrystore.APIKey{}, err
			}
			return r.org, r.key, nil
		}
	}
	if err := g.take(g.perAddr, addr, g.anonRate, g.anonBurst, addressBucket); err != nil {
		return entrystore.Org{}, entrystore.APIKey{}, err
	}
	if !ok {
		return entrystore.Org{}, entrystore.APIKey{}, errUnauthenticated
	}
	if _, hit := g.unknown.get(hash, g.now()); hit {
		return entrystore.Org{}, entrystore.APIKey{}, errUnauthenticated
	}
	o, k, err := s.lookupKey(ctx, secret)
	switch {
	case errors.Is(err, errUnauthenticated):
		g.unknown.put(hash, struct{}{}, g.now())
		g.penalize(addr)
	case err == nil:
		g.valid.put(hash, resolvedKey{org: o, key: k}, g.now())
	}
	return o, k, err
}

// forget drops a key from the cache of valid keys, so the next request
// with it asks the store: after this gateway revoked or expired it.
func (g *keyGuard) forget(keyID string) {
	if g != nil {
		g.valid.removeIf(func(r resolvedKey) bool { return r.key.ID == keyID })
	}
}

// lookupKey asks the store. Only a key it does not know is
// errUnauthenticated; an outage is not cached, being no answer about the
// key.
func (s *service) lookupKey(ctx context.Context, secret string) (entrystore.Org, entrystore.APIKey, error) {
	o, k, err := s.es.AuthenticateAPIKey(ctx, secret)
	if errors.Is(err, entrystore.ErrNotFound) {
		return entrystore.Org{}, entrystore.APIKey{}, errUnauthenticated
	}
	if err != nil {
		return entrystore.Org{}, entrystore.APIKey{}, toStatus(s.log, "authenticate", err)
	}
	return o, k, nil
}

// clientAddr is the IP of an HTTP request's peer. Forwarding headers are
// not trusted: behind a proxy every client shares the proxy's bucket, so
// run the proxy's own limits there.
func clientAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
