-- Per-organization quotas (issue 36).
--
-- org_quota: an organization's limits; 0 is no limit, and an organization
-- without a row has none. max_running bounds its executions that have not
-- ended (PENDING, RUNNING, WAITING, CANCELLING): a create past it is
-- refused. tokens_per_day and cost_per_day bound its model calls per UTC
-- day: a model call is refused once the day's spend reached either, and
-- its execution ends PAUSED with stop reason "budget".
CREATE TABLE org_quota (
    org_id          UUID PRIMARY KEY REFERENCES organization(id) ON DELETE CASCADE,
    max_running     INTEGER NOT NULL DEFAULT 0 CHECK (max_running >= 0),
    tokens_per_day  BIGINT NOT NULL DEFAULT 0 CHECK (tokens_per_day >= 0),
    cost_per_day    DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (cost_per_day >= 0),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- org_usage_day: each organization's spend per UTC day, kept by a trigger
-- as model calls are recorded, so the check before a model call is one
-- primary-key read. Summing the day's entries instead (what GET …/usage
-- does) reads every call's row, assistant content included: thousands of
-- rows per turn for a busy organization. Tokens are input + output (cache
-- reads and writes are not counted again). Rows outlive pruned entries:
-- spend that happened stays spent.
CREATE TABLE org_usage_day (
    org_id  UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    day     DATE NOT NULL,
    tokens  BIGINT NOT NULL DEFAULT 0,
    cost    DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, day)
);

-- model_call_usage is a model call entry's record (m) and usage (u), as
-- entrystore's modelCalls reads them: an llm_call entry's metadata, or the
-- record folded into the assistant entry the call wrote. m is NULL for an
-- entry that records no call (a message a client appended). It is one row
-- as a table function so the planner inlines it in a FROM; the usage
-- queries read entries through it too.
CREATE FUNCTION model_call_usage(entry_type text, content json, metadata json)
RETURNS TABLE (m json, u json) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN entry_type = 'llm_call' THEN metadata ELSE metadata->'llmCall' END,
           CASE WHEN entry_type = 'llm_call' THEN metadata->'usage' ELSE content->'usage' END
$$;

CREATE FUNCTION count_org_usage_day() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM model_call_usage(NEW.entry_type, NEW.content, NEW.metadata);
    IF c.m IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO org_usage_day AS d (org_id, day, tokens, cost)
    VALUES (NEW.org_id, (NEW.created_at AT TIME ZONE 'UTC')::date,
            coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0),
            coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0))
    ON CONFLICT (org_id, day) DO UPDATE SET tokens = d.tokens + EXCLUDED.tokens, cost = d.cost + EXCLUDED.cost;
    RETURN NULL;
END
$$;

-- The WHEN clause is the agent_entry_model_call index's predicate: other
-- entries never run the function. Measured (EXPLAIN ANALYZE, 900 model
-- call inserts on this machine under load): the trigger takes 0.07 ms of
-- an insert's 0.21 ms, about what one foreign-key check does; the upsert
-- holds the organization's row for the day until the append commits.
-- BenchmarkAppendModelCall (entrystore) compares appends with and without.
CREATE TRIGGER agent_entry_org_usage_day AFTER INSERT ON agent_entry
    FOR EACH ROW WHEN (NEW.entry_type = 'llm_call' OR (NEW.entry_type = 'message' AND NEW.role = 'assistant'))
    EXECUTE FUNCTION count_org_usage_day();

-- Today's spend so far, so a quota set right after the upgrade sees it.
INSERT INTO org_usage_day (org_id, day, tokens, cost)
SELECT e.org_id, (e.created_at AT TIME ZONE 'UTC')::date,
       sum(coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0)),
       sum(coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0))
FROM agent_entry e CROSS JOIN LATERAL model_call_usage(e.entry_type, e.content, e.metadata) c
WHERE (e.entry_type = 'llm_call' OR (e.entry_type = 'message' AND e.role = 'assistant')) AND c.m IS NOT NULL
  AND e.created_at >= (date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
GROUP BY 1, 2;
