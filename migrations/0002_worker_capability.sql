-- What each running worker serves, so the gateway validates a request
-- against live workers instead of configuration it cannot check. Unlike
-- every other table this is NOT org-scoped: a worker serves every
-- organization, and nothing here is a tenant's data (no URLs, no keys).
--
-- A worker upserts its row on start and every few seconds, pushing
-- lease_expires_at forward, and deletes it on a clean stop; a worker that
-- dies stops counting once its lease runs out.

CREATE TABLE worker_capability (
    identity         TEXT NOT NULL,
    task_queue       TEXT NOT NULL,
    namespace        TEXT NOT NULL DEFAULT '',
    version          TEXT NOT NULL DEFAULT '',
    kinds            JSONB NOT NULL DEFAULT '[]',  -- ["react-agent", ...]
    tools            JSONB NOT NULL DEFAULT '[]',  -- [{name, description, parameters}]
    models           JSONB NOT NULL DEFAULT '[]',  -- [{name, provider, models}]
    started_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (identity, task_queue)
);
CREATE INDEX worker_capability_live ON worker_capability (lease_expires_at);
