-- Explanations of executions (issue 41, seed 004 §10): one explain-model
-- call over a compact replay of an execution up to a leaf, made once per
-- (execution, leaf) — the unique key is what makes a second request for
-- the same leaf free. The gateway writes the row with the replay it
-- built (prompt), then starts a small workflow that a worker runs: the
-- row is all the workflow carries a reference to. The call's record
-- (llm_call: model, usage, cost, as an llm_call entry's metadata) is
-- written with its text; it is not an entry, since an entry would move
-- the execution's leaf, so the usage queries and the daily spend read it
-- from here too (entrystore modelCalls, the trigger below).
CREATE TABLE agent_explanation (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    leaf_entry_id       UUID NOT NULL,
    status              TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed')),
    model               JSON NOT NULL,
    prompt              TEXT NOT NULL,
    replay_tokens       INTEGER NOT NULL DEFAULT 0,
    decision_points     INTEGER NOT NULL DEFAULT 0,
    truncated           BOOLEAN NOT NULL DEFAULT false,
    text                TEXT,
    llm_call            JSON,
    error               TEXT,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    completed_at        TIMESTAMPTZ,
    UNIQUE (agent_execution_id, leaf_entry_id)
);
CREATE INDEX agent_explanation_latest ON agent_explanation (org_id, agent_execution_id, created_at DESC);

-- The day's spend counts an explanation's call as it is recorded, as
-- agent_entry_org_usage_day counts an entry's (model_call_usage of an
-- llm_call entry with the record as its metadata).
CREATE FUNCTION count_explanation_usage_day() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM model_call_usage('llm_call', '{}'::json, NEW.llm_call);
    INSERT INTO org_usage_day AS d (org_id, day, tokens, cost)
    VALUES (NEW.org_id, (NEW.completed_at AT TIME ZONE 'UTC')::date,
            coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0),
            coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0))
    ON CONFLICT (org_id, day) DO UPDATE SET tokens = d.tokens + EXCLUDED.tokens, cost = d.cost + EXCLUDED.cost;
    RETURN NULL;
END
$$;

CREATE TRIGGER agent_explanation_org_usage_day AFTER UPDATE OF llm_call ON agent_explanation
    FOR EACH ROW WHEN (OLD.llm_call IS NULL AND NEW.llm_call IS NOT NULL)
    EXECUTE FUNCTION count_explanation_usage_day();
