package entrystore

import (
	"context"
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
