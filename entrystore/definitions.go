package entrystore

import (
	"context"
	"encoding/json"
	"time"
)

// DefaultKind is the agent kind (and workflow type) of the built-in ReAct
// agent, used when a definition or execution names none.
const DefaultKind = "react-agent"

// Definition is a reusable agent configuration that executions are started
// from; an execution freezes its own copy of the config at creation.
type Definition struct {
	ID           string          `db:"id"`
	OrgID        string          `db:"org_id"`
	Name         string          `db:"name"`
	Slug         string          `db:"slug"`
	Description  string          `db:"description"`
	Kind         string          `db:"kind"`
	SystemPrompt string          `db:"system_prompt"`
	Models       json.RawMessage `db:"models"`
	Tools        []string        `db:"tools"`
	Config       json.RawMessage `db:"config"`
	Metadata     json.RawMessage `db:"metadata"`
	// ExposeA2A and ExposeMCP say whether the gateway serves the
	// definition as an A2A agent and as an MCP tool; both are off unless
	// set, so a definition is private until its owner opts in.
	ExposeA2A bool      `db:"expose_a2a"`
	ExposeMCP bool      `db:"expose_mcp"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

const definitionCols = `id::text AS id, org_id::text AS org_id, name, slug, description, kind,
	system_prompt, models, tools, config, metadata, expose_a2a, expose_mcp, created_at, updated_at`

func (d Definition) utc() Definition {
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if d.Tools == nil {
		d.Tools = []string{}
	}
	return d
}

// args validates d and returns its columns in definitionArgs order.
func (d Definition) args(op string) ([]any, error) {
	if d.Name == "" {
		return nil, errf(op, ErrInvalid, "name is required")
	}
	if !slugRE.MatchString(d.Slug) {
		return nil, errf(op, ErrInvalid, "slug %q", d.Slug)
	}
	if d.Kind == "" {
		d.Kind = DefaultKind
	}
	tools := d.Tools
	if tools == nil {
		tools = []string{}
	}
	return []any{d.Name, d.Slug, d.Description, d.Kind, d.SystemPrompt,
		jsonOr(d.Models, "[]"), tools, jsonOr(d.Config, "{}"), nullJSON(d.Metadata), d.ExposeA2A, d.ExposeMCP}, nil
}

// jsonOr substitutes def for an empty document in a NOT NULL column.
func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// CreateDefinition stores d (ID and timestamps are assigned). A slug already
// used in the organization is ErrConflict.
func (s *Store) CreateDefinition(ctx context.Context, d Definition) (Definition, error) {
	const op = "create definition"
	ids, err := writeIDs(op, d.OrgID)
	if err != nil {
		return Definition{}, err
	}
	args, err := d.args(op)
	if err != nil {
		return Definition{}, err
	}
	out, err := queryOne[Definition](ctx, s.pool, `
		INSERT INTO agent_definition (org_id, name, slug, description, kind, system_prompt, models, tools, config, metadata,
			expose_a2a, expose_mcp)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		RETURNING `+definitionCols, append([]any{ids[0]}, args...)...)
	return out.utc(), wrap(op, err)
}

// GetDefinition returns one definition of the organization.
func (s *Store) GetDefinition(ctx context.Context, orgID, id string) (Definition, error) {
	d, err := getOne[Definition](ctx, s.pool, "get definition "+id, "agent_definition", definitionCols, orgID, id)
	return d.utc(), err
}

// GetDefinitionBySlug returns the organization's definition with that
// slug: the standard endpoints (A2A, MCP) name a definition by its slug.
func (s *Store) GetDefinitionBySlug(ctx context.Context, orgID, slug string) (Definition, error) {
	op := "get definition " + slug
	ids, err := readIDs(op, orgID)
	if err != nil {
		return Definition{}, err
	}
	d, err := queryOne[Definition](ctx, s.pool,
		`SELECT `+definitionCols+` FROM agent_definition WHERE org_id = $1 AND slug = $2`, ids[0], slug)
	return d.utc(), wrap(op, err)
}

// ListDefinitions pages through the organization's definitions, oldest
// first.
func (s *Store) ListDefinitions(ctx context.Context, orgID string, p Page) ([]Definition, string, error) {
	ds, next, err := listOldestFirst(ctx, s.pool, "list definitions", "agent_definition", definitionCols, orgID, p,
		func(d Definition) keyset { return keyset{T: d.CreatedAt, ID: d.ID} })
	return utcAll(ds, Definition.utc), next, err
}

// UpdateDefinition replaces the editable fields of the definition (OrgID,
// ID) and bumps updated_at; executions already started keep their copy.
func (s *Store) UpdateDefinition(ctx context.Context, d Definition) (Definition, error) {
	op := "update definition " + d.ID
	ids, err := readIDs(op, d.OrgID, d.ID)
	if err != nil {
		return Definition{}, err
	}
	args, err := d.args(op)
	if err != nil {
		return Definition{}, err
	}
	out, err := queryOne[Definition](ctx, s.pool, `
		UPDATE agent_definition SET name = $3, slug = $4, description = $5, kind = $6, system_prompt = $7,
			models = $8, tools = $9, config = $10, metadata = $11, expose_a2a = $12, expose_mcp = $13, updated_at = now()
		WHERE org_id = $1 AND id = $2
		RETURNING `+definitionCols, append([]any{ids[0], ids[1]}, args...)...)
	return out.utc(), wrap(op, err)
}

// DeleteDefinition removes a definition; its executions keep running and
// lose only the reference.
func (s *Store) DeleteDefinition(ctx context.Context, orgID, id string) error {
	op := "delete definition " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM agent_definition WHERE org_id = $1 AND id = $2`, ids[0], ids[1])
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(op, ErrNotFound)
	}
	return nil
}
