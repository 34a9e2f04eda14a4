package entrystore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5"
)

// ManifestMediaType is the media type a workspace manifest is stored as
// in content.
const ManifestMediaType = "application/vnd.agentree.workspace-manifest+json"

// WorkspaceSnapshot records that the workspace of an execution, at the
// checkpoint whose leaf is EntryID, is the manifest stored in content
// under ManifestSHA256 (migration 0026).
type WorkspaceSnapshot struct {
	OrgID       string    `db:"org_id"`
	ExecutionID string    `db:"agent_execution_id"`
	EntryID     string    `db:"entry_id"`
	Manifest    string    `db:"manifest"` // hex sha256 of the manifest's content
	Files       int       `db:"files"`
	Bytes       int64     `db:"bytes"`
	Truncated   bool      `db:"truncated"`
	Depth       int       `db:"depth"`
	CreatedAt   time.Time `db:"created_at"`
}

const snapshotCols = `org_id::text, agent_execution_id::text, entry_id::text, encode(manifest_sha256, 'hex') AS manifest,
	files, bytes, truncated, depth, created_at`

// SnapshotOf returns the snapshot recorded against entryID, if any, and
// whether there is one: a capture run again (a retried checkpoint) finds
// it and stores nothing. ErrNotFound: the organization has no such entry
// in this store (a worker-held execution's entries live elsewhere).
func (s *Store) SnapshotOf(ctx context.Context, orgID, entryID string) (WorkspaceSnapshot, bool, error) {
	op := "workspace snapshot of " + entryID
	ids, err := readIDs(op, orgID, entryID)
	if err != nil {
		return WorkspaceSnapshot{}, false, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT e.id::text AS entry_id, s.org_id::text, s.agent_execution_id::text, encode(s.manifest_sha256, 'hex') AS manifest,
			s.files, s.bytes, s.truncated, s.depth, s.created_at
		FROM agent_entry e LEFT JOIN agent_workspace_snapshot s ON s.entry_id = e.id
		WHERE e.id = $2 AND e.org_id = $1`, ids[0], ids[1])
	if err != nil {
		return WorkspaceSnapshot{}, false, wrap(op, err)
	}
	type row struct {
		EntryID     string     `db:"entry_id"`
		OrgID       *string    `db:"org_id"`
		ExecutionID *string    `db:"agent_execution_id"`
		Manifest    *string    `db:"manifest"`
		Files       *int       `db:"files"`
		Bytes       *int64     `db:"bytes"`
		Truncated   *bool      `db:"truncated"`
		Depth       *int       `db:"depth"`
		CreatedAt   *time.Time `db:"created_at"`
	}
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[row])
	if err != nil {
		return WorkspaceSnapshot{}, false, wrap(op, err)
	}
	if r.Manifest == nil {
		return WorkspaceSnapshot{}, false, nil
	}
	return WorkspaceSnapshot{OrgID: *r.OrgID, ExecutionID: *r.ExecutionID, EntryID: r.EntryID, Manifest: *r.Manifest,
		Files: *r.Files, Bytes: *r.Bytes, Truncated: *r.Truncated, Depth: *r.Depth, CreatedAt: *r.CreatedAt}, true, nil
}

// MissingContent returns those of the sha256 digests (hex) the
// organization's content does not hold: what a capture must upload.
func (s *Store) MissingContent(ctx context.Context, orgID string, shas []string) ([]string, error) {
	const op = "missing content"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return nil, err
	}
	sums := make([][]byte, 0, len(shas))
	for _, h := range shas {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			return nil, errf(op, ErrInvalid, "malformed sha256 %q", h)
		}
		sums = append(sums, b)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT encode(w.sha, 'hex') FROM unnest($2::bytea[]) AS w(sha)
		WHERE NOT EXISTS (SELECT 1 FROM content c WHERE c.org_id = $1 AND c.sha256 = w.sha)`, ids[0], sums)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrap(op, err)
}

// PutSnapshot records snap against its entry, which must be an entry of
// the organization; a snapshot recorded there already stays and is
// returned (the first capture of a checkpoint wins, so a retried one
// answers the same manifest).
func (s *Store) PutSnapshot(ctx context.Context, snap WorkspaceSnapshot) (WorkspaceSnapshot, error) {
	op := "put workspace snapshot at " + snap.EntryID
	ids, err := writeIDs(op, snap.OrgID, snap.EntryID)
	if err != nil {
		return WorkspaceSnapshot{}, err
	}
	sum, err := hex.DecodeString(snap.Manifest)
	if err != nil || len(sum) != sha256.Size {
		return WorkspaceSnapshot{}, errf(op, ErrInvalid, "malformed manifest sha256 %q", snap.Manifest)
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO agent_workspace_snapshot (entry_id, org_id, agent_execution_id, branch_id, depth, manifest_sha256, files, bytes, truncated)
		SELECT e.id, e.org_id, e.agent_execution_id, e.branch_id, e.depth, $3, $4, $5, $6
		FROM agent_entry e WHERE e.id = $2 AND e.org_id = $1
		ON CONFLICT (entry_id) DO NOTHING`, ids[0], ids[1], sum, snap.Files, snap.Bytes, snap.Truncated)
	if err != nil {
		return WorkspaceSnapshot{}, wrap(op, err)
	}
	out, ok, err := s.SnapshotOf(ctx, snap.OrgID, snap.EntryID)
	if err == nil && !ok {
		err = wrap(op, ErrNotFound)
	}
	return out, err
}

// NearestSnapshot returns the snapshot of entryID or, when it has none,
// of its nearest ancestor that has one: the workspace as it was at that
// entry. Like ContextPath's compaction it probes one index range per
// branch of the path, never reading the path's entries. ErrNotFound: no
// such entry in the organization, or no snapshot on its path.
func (s *Store) NearestSnapshot(ctx context.Context, orgID, entryID string) (WorkspaceSnapshot, error) {
	op := "nearest workspace snapshot of " + entryID
	ids, err := readIDs(op, orgID, entryID)
	if err != nil {
		return WorkspaceSnapshot{}, err
	}
	rows, err := s.pool.Query(ctx, pathBranchesSQL+`
		SELECT `+snapshotCols+` FROM seg CROSS JOIN LATERAL (
			SELECT * FROM agent_workspace_snapshot w
			WHERE w.branch_id = seg.branch_id AND w.depth <= seg.max_depth AND w.org_id = $1
			ORDER BY w.depth DESC LIMIT 1
		) w
		ORDER BY depth DESC LIMIT 1`, ids[0], ids[1])
	if err != nil {
		return WorkspaceSnapshot{}, wrap(op, err)
	}
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WorkspaceSnapshot])
	return out, wrap(op, err)
}
