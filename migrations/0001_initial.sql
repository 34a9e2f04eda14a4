-- Agentree's side store. Every row is org-scoped; entries are immutable and
-- form a tree through parent_id; checkpoints point at a leaf.

CREATE TABLE organization (
    id          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    slug        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The system organization owns payloads that Temporal's external storage
-- driver offloads; it has no API keys and is never served over REST.
INSERT INTO organization (id, slug, name)
VALUES ('00000000-0000-0000-0000-000000000000', '_system', 'system');

CREATE TABLE api_key (
    id           UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id       UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '',
    prefix       TEXT NOT NULL,
    hash         BYTEA NOT NULL UNIQUE,   -- sha256 of the whole key
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_key_org ON api_key (org_id, created_at, id);

CREATE TABLE agent_definition (
    id             UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id         UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    slug           TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    kind           TEXT NOT NULL DEFAULT 'react-agent',
    system_prompt  TEXT NOT NULL DEFAULT '',
    models         JSONB NOT NULL DEFAULT '[]',
    tools          JSONB NOT NULL DEFAULT '[]',
    config         JSONB NOT NULL DEFAULT '{}',
    metadata       JSONB,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, slug),
    UNIQUE (org_id, id)
);
CREATE INDEX agent_definition_list ON agent_definition (org_id, created_at, id);

CREATE TABLE agent_execution (
    id                     UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id                 UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_definition_id    UUID REFERENCES agent_definition(id) ON DELETE SET NULL,
    parent_id              UUID REFERENCES agent_execution(id) ON DELETE SET NULL,
    resumed_from           UUID REFERENCES agent_execution(id) ON DELETE SET NULL,
    kind                   TEXT NOT NULL,
    status                 TEXT NOT NULL DEFAULT 'PENDING'
        CHECK (status IN ('PENDING','RUNNING','WAITING','CANCELLING','COMPLETED','FAILED','CANCELLED')),
    config                 JSONB NOT NULL DEFAULT '{}',   -- frozen at creation
    input                  JSONB,
    output                 JSONB,
    error                  TEXT NOT NULL DEFAULT '',
    stop_reason            TEXT NOT NULL DEFAULT '',
    queue                  TEXT NOT NULL DEFAULT 'agentree',
    current_checkpoint_seq INTEGER NOT NULL DEFAULT 0,
    step_count             INTEGER NOT NULL DEFAULT 0,
    metadata               JSONB,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at             TIMESTAMPTZ,
    completed_at           TIMESTAMPTZ,
    version                INTEGER NOT NULL DEFAULT 1,
    UNIQUE (org_id, id)
);
-- Cursor pagination is (created_at, id) descending, newest first.
CREATE INDEX agent_execution_list       ON agent_execution (org_id, created_at DESC, id DESC);
CREATE INDEX agent_execution_status     ON agent_execution (org_id, status, created_at DESC, id DESC);
CREATE INDEX agent_execution_kind       ON agent_execution (org_id, kind, created_at DESC, id DESC);
CREATE INDEX agent_execution_definition ON agent_execution (org_id, agent_definition_id, created_at DESC, id DESC)
    WHERE agent_definition_id IS NOT NULL;
CREATE INDEX agent_execution_parent     ON agent_execution (org_id, parent_id, created_at DESC, id DESC)
    WHERE parent_id IS NOT NULL;

CREATE TABLE agent_entry (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    parent_id           UUID REFERENCES agent_entry(id),
    seq                 BIGINT GENERATED ALWAYS AS IDENTITY,  -- arrival order, for pagination
    depth               INTEGER NOT NULL DEFAULT 0,           -- distance from the root
    -- The run of first children this entry belongs to, named by the run's
    -- first entry. A run is a linear chain (one entry per depth), so a path
    -- is a few index ranges, one per branch point, instead of a row-by-row
    -- walk: a 10,000-entry conversation without forks is one range.
    branch_id           UUID NOT NULL,
    entry_type          TEXT NOT NULL,
    role                TEXT,
    content             JSONB NOT NULL,
    turn_id             TEXT,
    idempotency_key     TEXT NOT NULL,
    metadata            JSONB,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (agent_execution_id, idempotency_key)
);
-- The path walk hops from a branch's first entry to its parent, and from
-- there to the parent's branch and depth; covering those keeps each hop an
-- index-only lookup. agent_entry_branch then reads each branch as a range,
-- and its uniqueness is what keeps a branch linear under concurrent appends.
CREATE INDEX agent_entry_walk      ON agent_entry (id) INCLUDE (parent_id, branch_id, depth);
CREATE UNIQUE INDEX agent_entry_branch ON agent_entry (branch_id, depth);
CREATE INDEX agent_entry_list      ON agent_entry (agent_execution_id, seq);
CREATE INDEX agent_entry_children  ON agent_entry (parent_id, seq) WHERE parent_id IS NOT NULL;
CREATE INDEX agent_entry_turn      ON agent_entry (agent_execution_id, turn_id) WHERE turn_id IS NOT NULL;

CREATE TABLE agent_checkpoint (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    sequence            INTEGER NOT NULL,
    leaf_entry_id       UUID REFERENCES agent_entry(id),
    state               JSONB NOT NULL DEFAULT '{}',
    metadata            JSONB,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (agent_execution_id, sequence)
);

CREATE TABLE agent_signal (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    seq                 BIGINT GENERATED ALWAYS AS IDENTITY,   -- arrival order
    signal_name         TEXT NOT NULL,
    signal_value        JSONB,
    consumed            BOOLEAN NOT NULL DEFAULT false,
    consumed_at         TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_signal_pending ON agent_signal (agent_execution_id, seq) WHERE NOT consumed;

-- sha256-addressed blobs, deduplicated per organization.
CREATE TABLE content (
    org_id      UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    sha256      BYTEA NOT NULL,
    size        BIGINT NOT NULL,
    media_type  TEXT NOT NULL DEFAULT 'application/octet-stream',
    data        BYTEA NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, sha256)
);

CREATE TABLE agent_tool_call (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    message_id          UUID REFERENCES agent_entry(id),      -- the assistant entry that asked
    result_entry_id     UUID REFERENCES agent_entry(id),      -- the tool_result entry
    tool_call_id        TEXT NOT NULL,                        -- the model's ID for the call
    tool_name           TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('running','completed','error','cancelled')),
    input               JSONB,
    output              JSONB,
    output_sha256       BYTEA,        -- full output in content when it was truncated
    output_size         BIGINT NOT NULL DEFAULT 0,
    truncated           BOOLEAN NOT NULL DEFAULT false,
    duration_ms         BIGINT NOT NULL DEFAULT 0,
    step_number         INTEGER NOT NULL DEFAULT 0,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (agent_execution_id, message_id, tool_call_id)
);
CREATE INDEX agent_tool_call_list ON agent_tool_call (agent_execution_id, step_number, created_at, id);
CREATE INDEX agent_tool_call_name ON agent_tool_call (agent_execution_id, tool_name, step_number);
CREATE INDEX agent_tool_call_status ON agent_tool_call (agent_execution_id, status, step_number);

-- A bounded replay window of stream events, so an SSE client that reconnects
-- with Last-Event-ID gets what it missed. Pruned by age/count.
CREATE TABLE agent_stream_event (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    event               TEXT NOT NULL,
    data                JSONB NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_stream_event_replay ON agent_stream_event (agent_execution_id, id);
CREATE INDEX agent_stream_event_age ON agent_stream_event (created_at);
