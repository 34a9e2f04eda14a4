-- Retention and pruning (issue 16).
--
-- retention_policy: per organization, how long terminal executions are
-- kept after they end (COMPLETED, CANCELLED, PAUSED: keep_days; FAILED:
-- keep_failed_days). Without a row the pruner's defaults apply. Live
-- executions are never pruned, whatever their age.
CREATE TABLE retention_policy (
    org_id            UUID PRIMARY KEY REFERENCES organization(id) ON DELETE CASCADE,
    keep_days         INTEGER NOT NULL CHECK (keep_days >= 0),
    keep_failed_days  INTEGER NOT NULL CHECK (keep_failed_days >= 0),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Content is shared by hash: a put that finds the row already there
-- touches it, and the pruner removes only content untouched for a grace
-- period that nothing references, so a put racing a prune never leaves a
-- reference to a deleted row.
ALTER TABLE content ADD COLUMN touched_at TIMESTAMPTZ NOT NULL DEFAULT now();

-- What the pruner looks up: ended executions by age, and who else holds a
-- content hash.
CREATE INDEX agent_execution_ended ON agent_execution (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX agent_tool_call_output ON agent_tool_call (org_id, output_sha256) WHERE output_sha256 IS NOT NULL;

-- Deleting entries and executions checks the rows that reference them
-- (foreign keys without an index of their own would cost a scan of the
-- whole table per deleted row).
CREATE INDEX agent_tool_call_message ON agent_tool_call (message_id);
CREATE INDEX agent_tool_call_result ON agent_tool_call (result_entry_id) WHERE result_entry_id IS NOT NULL;
CREATE INDEX agent_checkpoint_leaf ON agent_checkpoint (leaf_entry_id);
CREATE INDEX agent_execution_parent_id ON agent_execution (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX agent_signal_execution ON agent_signal (agent_execution_id);
