package entrystore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"time"
)

// slugRE is the shape of organization and definition slugs: URL-safe and
// unable to collide with the reserved "_system".
var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidSlug reports whether s has the shape of a slug (1 to 63 lowercase
// letters, digits and '-', starting with a letter or digit), so callers
// can refuse one with their own words before it reaches the store.
func ValidSlug(s string) bool { return slugRE.MatchString(s) }

// Org is a tenant; every other row belongs to one.
type Org struct {
	ID        string    `db:"id"`
	Slug      string    `db:"slug"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
}

const orgCols = `id::text AS id, slug, name, created_at`

func (o Org) utc() Org { o.CreatedAt = o.CreatedAt.UTC(); return o }

// CreateOrg creates an organization. A taken slug is ErrConflict.
func (s *Store) CreateOrg(ctx context.Context, slug, name string) (Org, error) {
	const op = "create org"
	if !slugRE.MatchString(slug) {
		return Org{}, errf(op, ErrInvalid, "slug %q", slug)
	}
	o, err := queryOne[Org](ctx, s.pool,
		`INSERT INTO organization (slug, name) VALUES ($1, $2) RETURNING `+orgCols, slug, name)
	return o.utc(), wrap(op, err)
}

// EnsureOrg returns the organization with slug, creating it (named after
// the slug) if missing. Concurrent callers all get the same row.
func (s *Store) EnsureOrg(ctx context.Context, slug string) (Org, error) {
	const op = "ensure org"
	o, err := s.GetOrgBySlug(ctx, slug)
	if !errors.Is(err, ErrNotFound) {
		return o, err
	}
	if !slugRE.MatchString(slug) {
		return Org{}, errf(op, ErrInvalid, "slug %q", slug)
	}
	// ON CONFLICT DO UPDATE (a no-op) returns the row whichever caller won.
	o, err = queryOne[Org](ctx, s.pool,
		`INSERT INTO organization (slug, name) VALUES ($1, $1)
		 ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug
		 RETURNING `+orgCols, slug)
	return o.utc(), wrap(op, err)
}

// GetOrg returns the organization by ID.
func (s *Store) GetOrg(ctx context.Context, id string) (Org, error) {
	ids, err := readIDs("get org", id)
	if err != nil {
		return Org{}, err
	}
	o, err := queryOne[Org](ctx, s.pool, `SELECT `+orgCols+` FROM organization WHERE id = $1`, ids[0])
	return o.utc(), wrap("get org "+id, err)
}

// GetOrgBySlug returns the organization by slug, the form URLs use.
func (s *Store) GetOrgBySlug(ctx context.Context, slug string) (Org, error) {
	o, err := queryOne[Org](ctx, s.pool, `SELECT `+orgCols+` FROM organization WHERE slug = $1`, slug)
	return o.utc(), wrap("get org "+slug, err)
}

// APIKey is an organization's credential. Only its sha256 is stored; Prefix
// is kept in the clear so people can tell keys apart.
type APIKey struct {
	ID         string     `db:"id"`
	OrgID      string     `db:"org_id"`
	Name       string     `db:"name"`
	Prefix     string     `db:"prefix"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
}

const apiKeyCols = `id::text AS id, org_id::text AS org_id, name, prefix, created_at, last_used_at`

func (k APIKey) utc() APIKey {
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = utcPtr(k.LastUsedAt)
	return k
}

// CreateAPIKey mints a key "agt_<8 hex>_<64 hex>" for the organization and
// returns the secret once; it cannot be recovered later.
func (s *Store) CreateAPIKey(ctx context.Context, orgID, name string) (string, APIKey, error) {
	const op = "create api key"
	ids, err := writeIDs(op, orgID)
	if err != nil {
		return "", APIKey{}, err
	}
	var raw [36]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", APIKey{}, wrap(op, err)
	}
	prefix := hex.EncodeToString(raw[:4])
	secret := "agt_" + prefix + "_" + hex.EncodeToString(raw[4:])
	hash := sha256.Sum256([]byte(secret))
	k, err := queryOne[APIKey](ctx, s.pool,
		`INSERT INTO api_key (org_id, name, prefix, hash) VALUES ($1, $2, $3, $4) RETURNING `+apiKeyCols,
		ids[0], name, prefix, hash[:])
	if err != nil {
		return "", APIKey{}, wrap(op, err)
	}
	return secret, k.utc(), nil
}

// apiKeyLen is the length of "agt_<8 hex>_<64 hex>", what CreateAPIKey
// mints.
const apiKeyLen = len("agt_") + 8 + 1 + 64

// WellFormedAPIKey reports whether secret has the shape CreateAPIKey gives
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

// AuthenticateAPIKey resolves a bearer secret to its organization and key.
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
		), touch AS (
			UPDATE api_key SET last_used_at = now() FROM k
			WHERE api_key.id = k.id
			  AND (api_key.last_used_at IS NULL OR api_key.last_used_at < now() - interval '1 minute')
		)
		SELECT k.id::text AS id, k.org_id::text AS org_id, k.name, k.prefix, k.created_at, k.last_used_at,
		       o.slug AS org_slug, o.name AS org_name, o.created_at AS org_created_at
		FROM k JOIN organization o ON o.id = k.org_id`, hash[:])
	if err != nil {
		return Org{}, APIKey{}, wrap("authenticate api key", err)
	}
	org := Org{ID: r.OrgID, Slug: r.OrgSlug, Name: r.OrgName, CreatedAt: r.OrgCreatedAt}
	return org.utc(), r.APIKey.utc(), nil
}

// RevokeAPIKey disables a key; authenticating with it answers ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, orgID, id string) error {
	const op = "revoke api key"
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE api_key SET revoked_at = coalesce(revoked_at, now()) WHERE org_id = $1 AND id = $2`, ids[0], ids[1])
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return errf(op, ErrNotFound, "%s", id)
	}
	return nil
}
