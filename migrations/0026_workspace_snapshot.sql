-- Workspace snapshots on the conversation tree (issue 40): the coding
-- tools' workspace as captured at a checkpoint, stored against the
-- checkpoint's leaf entry. The manifest (path → type, mode, size, sha256)
-- is itself content, its sha256 its ID, as are the files it lists: a file
-- unchanged between checkpoints is stored once. branch_id and depth are
-- the entry's, so the nearest snapshot on a path is one index probe per
-- branch of the path, as the latest compaction is.
CREATE TABLE agent_workspace_snapshot (
    entry_id            UUID PRIMARY KEY REFERENCES agent_entry(id) ON DELETE CASCADE,
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    branch_id           UUID NOT NULL,
    depth               INTEGER NOT NULL,
    manifest_sha256     BYTEA NOT NULL,
    files               INTEGER NOT NULL,
    bytes               BIGINT NOT NULL,
    truncated           BOOLEAN NOT NULL DEFAULT false,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_workspace_snapshot_path ON agent_workspace_snapshot (branch_id, depth);
