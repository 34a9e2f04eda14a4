package entrystore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Roles a key may carry. Each RPC declares the one it needs
// (proto/agentree/v1/access.proto); the store keeps only these names.
const (
	// RoleAdmin manages the organization: keys, retention, definitions,
	// quotas.
	RoleAdmin = "admin"
	// RoleRun starts and steers executions: create, signal, cancel, fork,
	// resume, compact.
	RoleRun = "run"
	// RoleApprove decides tool calls that wait for approval.
	RoleApprove = "approve"
	// RoleRead reads everything read-only.
	RoleRead = "read"
)

// AllRoles is every role, in the order the API lists them; a key minted
// without roles named carries all of them.
var AllRoles = []string{RoleAdmin, RoleRun, RoleApprove, RoleRead}

// APIKey is an organization's credential. Only its sha256 is stored; Prefix
// is kept in the clear so people can tell keys apart.
type APIKey struct {
	ID         string     `db:"id"`
	OrgID      string     `db:"org_id"`
	Name       string     `db:"name"`
	Prefix     string     `db:"prefix"`
	Roles      []string   `db:"roles"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	// ExpiresAt is when the key stops authenticating (nil: never).
	ExpiresAt *time.Time `db:"expires_at"`
	// RevokedAt is when it was revoked (nil: it was not).
	RevokedAt *time.Time `db:"revoked_at"`
}

// Has reports whether the key carries role.
func (k APIKey) Has(role string) bool { return slices.Contains(k.Roles, role) }

// Expired reports whether the key has expired by now.
func (k APIKey) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

const apiKeyCols = `id::text AS id, org_id::text AS org_id, name, prefix, roles, created_at, last_used_at,
	expires_at, revoked_at`

func (k APIKey) utc() APIKey {
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt, k.ExpiresAt, k.RevokedAt = utcPtr(k.LastUsedAt), utcPtr(k.ExpiresAt), utcPtr(k.RevokedAt)
	return k
}

// NewAPIKey is what MintAPIKey makes.
type NewAPIKey struct {
	Name string
	// Roles the key carries; empty is AllRoles.
	Roles []string
	// ExpiresAt, when set, is when the key stops authenticating; it must
	// be in the future.
	ExpiresAt *time.Time
}

// CheckRoles returns roles sorted in AllRoles order without repeats, or
// ErrInvalid naming the first unknown one; empty is AllRoles.
func CheckRoles(roles []string) ([]string, error) {
	if len(roles) == 0 {
		return slices.Clone(AllRoles), nil
	}
	for _, r := range roles {
		if !slices.Contains(AllRoles, r) {
			return nil, fmt.Errorf("%w: unknown role %q: roles are %s", ErrInvalid, r, strings.Join(AllRoles, ", "))
		}
	}
	out := make([]string, 0, len(AllRoles))
	for _, r := range AllRoles {
		if slices.Contains(roles, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// CreateAPIKey mints a key with every role and no expiry; see MintAPIKey.
func (s *Store) CreateAPIKey(ctx context.Context, orgID, name string) (string, APIKey, error) {
	return s.MintAPIKey(ctx, orgID, NewAPIKey{Name: name})
}

// MintAPIKey mints a key "agt_<8 hex>_<64 hex>" for the organization and
// returns the secret once; it cannot be recovered later.
func (s *Store) MintAPIKey(ctx context.Context, orgID string, nk NewAPIKey) (string, APIKey, error) {
	const op = "create api key"
	ids, err := writeIDs(op, orgID)
	if err != nil {
		return "", APIKey{}, err
	}
	roles, err := CheckRoles(nk.Roles)
	if err != nil {
		return "", APIKey{}, fmt.Errorf("entrystore: %s: %w", op, err)
	}
	if nk.ExpiresAt != nil && !nk.ExpiresAt.After(time.Now()) {
		return "", APIKey{}, errf(op, ErrInvalid, "the expiry %s is not in the future", nk.ExpiresAt.UTC().Format(time.RFC3339))
	}
	var raw [36]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", APIKey{}, wrap(op, err)
	}
	prefix := hex.EncodeToString(raw[:4])
	secret := "agt_" + prefix + "_" + hex.EncodeToString(raw[4:])
	hash := sha256.Sum256([]byte(secret))
	k, err := queryOne[APIKey](ctx, s.pool,
		`INSERT INTO api_key (org_id, name, prefix, hash, roles, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
		 RETURNING `+apiKeyCols,
		ids[0], nk.Name, prefix, hash[:], roles, nk.ExpiresAt)
	if err != nil {
		return "", APIKey{}, wrap(op, err)
	}
	return secret, k.utc(), nil
}

// apiKeyLen is the length of "agt_<8 hex>_<64 hex>", what MintAPIKey
// mints.
const apiKeyLen = len("agt_") + 8 + 1 + 64

// WellFormedAPIKey reports whether secret has the shape MintAPIKey gives
// every key. Anything else cannot be a key, so it is refused without a
// hash or a query: the shape is public, so this tells a guesser nothing.
func WellFormedAPIKey(secret string) bool {
	if len(secret) != apiKeyLen || secret[:4] != "agt_" || secret[12] != '_' {
		return false
	}
	for i := 4; i < apiKeyLen; i++ {
		c := secret[i]
		if i != 12 && (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// AuthenticateAPIKey resolves a bearer secret to its organization and key;
// a revoked or expired key is ErrNotFound like an unknown one.
// A secret not shaped like a key is ErrNotFound at once; every well-formed
// one costs one sha256 and one indexed lookup by hash, so response time
// says nothing about how close a guess was. last_used_at is refreshed at
// most once a minute to spare writes.
func (s *Store) AuthenticateAPIKey(ctx context.Context, secret string) (Org, APIKey, error) {
	if !WellFormedAPIKey(secret) {
		return Org{}, APIKey{}, errf("authenticate api key", ErrNotFound, "not an API key")
	}
	hash := sha256.Sum256([]byte(secret))
	type row struct {
		APIKey
		OrgSlug      string    `db:"org_slug"`
		OrgName      string    `db:"org_name"`
		OrgCreatedAt time.Time `db:"org_created_at"`
	}
	r, err := queryOne[row](ctx, s.pool, `
		WITH k AS (
			SELECT * FROM api_key WHERE hash = $1 AND revoked_at IS NULL
			  AND (expires_at IS NULL OR expires_at > now())
		), touch AS (
			UPDATE api_key SET last_used_at = now() FROM k
			WHERE api_key.id = k.id
			  AND (api_key.last_used_at IS NULL OR api_key.last_used_at < now() - interval '1 minute')
		)
		SELECT k.id::text AS id, k.org_id::text AS org_id, k.name, k.prefix, k.roles, k.created_at, k.last_used_at,
		       k.expires_at, k.revoked_at,
		       o.slug AS org_slug, o.name AS org_name, o.created_at AS org_created_at
		FROM k JOIN organization o ON o.id = k.org_id`, hash[:])
	if err != nil {
		return Org{}, APIKey{}, wrap("authenticate api key", err)
	}
	org := Org{ID: r.OrgID, Slug: r.OrgSlug, Name: r.OrgName, CreatedAt: r.OrgCreatedAt}
	return org.utc(), r.APIKey.utc(), nil
}

// ListAPIKeys pages through the organization's keys, revoked and expired
// ones included, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, orgID string, p Page) ([]APIKey, string, error) {
	ks, next, err := listOldestFirst(ctx, s.pool, "list api keys", "api_key", apiKeyCols, orgID, p,
		func(k APIKey) keyset { return keyset{T: k.CreatedAt, ID: k.ID} })
	for i := range ks {
		ks[i] = ks[i].utc()
	}
	return ks, next, err
}

// RevokeAPIKey disables a key for good; authenticating with it answers
// ErrNotFound. Revoking it again changes nothing and returns it.
func (s *Store) RevokeAPIKey(ctx context.Context, orgID, id string) (APIKey, error) {
	const op = "revoke api key"
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return APIKey{}, err
	}
	k, err := queryOne[APIKey](ctx, s.pool,
		`UPDATE api_key SET revoked_at = coalesce(revoked_at, now()) WHERE org_id = $1 AND id = $2
		 RETURNING `+apiKeyCols, ids[0], ids[1])
	return k.utc(), wrap(op+" "+id, err)
}

// ExpireAPIKey brings a key's expiry forward to at (now when zero); it
// never extends it, so expiring twice keeps the earlier time.
func (s *Store) ExpireAPIKey(ctx context.Context, orgID, id string, at time.Time) (APIKey, error) {
	const op = "expire api key"
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return APIKey{}, err
	}
	var when any = at
	if at.IsZero() {
		when = nil
	}
	k, err := queryOne[APIKey](ctx, s.pool,
		`UPDATE api_key SET expires_at = LEAST(coalesce(expires_at, 'infinity'), coalesce($3::timestamptz, now()))
		 WHERE org_id = $1 AND id = $2 RETURNING `+apiKeyCols, ids[0], ids[1], when)
	return k.utc(), wrap(op+" "+id, err)
}
