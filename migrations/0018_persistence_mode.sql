-- An execution's persistence mode on its row (issue 35, seed 000
-- "Execution Modes"): "remote" (entries in Postgres) or "local" (in the
-- store of the worker that took it). It is generated from the frozen
-- config, so the column and config.persistenceMode can never disagree,
-- and existing rows get theirs from their config without a backfill.
ALTER TABLE agent_execution
    ADD COLUMN persistence_mode TEXT NOT NULL
    GENERATED ALWAYS AS (CASE WHEN config->>'persistenceMode' = 'local' THEN 'local' ELSE 'remote' END) STORED;
-- Local executions are the few: the list filter ?persistenceMode=local
-- reads this partial index; a remote filter reads the plain list index.
CREATE INDEX agent_execution_local_mode ON agent_execution (org_id, created_at DESC, id DESC)
    WHERE persistence_mode = 'local';
