-- Counterfactuals, cross-run search and failure clusters (issue 41).
--
-- A counterfactual is a fork whose configuration names the execution it
-- questions (config.counterfactual.of): the column is generated from the
-- frozen config, so no write path changes, and the list of an execution's
-- counterfactuals reads an index. A malformed ID (a config nobody but the
-- gateway should set) reads as none rather than failing the insert.
ALTER TABLE agent_execution ADD COLUMN counterfactual_of UUID GENERATED ALWAYS AS (
    CASE WHEN config->'counterfactual'->>'of' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
         THEN (config->'counterfactual'->>'of')::uuid END) STORED;
CREATE INDEX agent_execution_counterfactuals ON agent_execution (counterfactual_of, created_at DESC, id DESC)
    WHERE counterfactual_of IS NOT NULL;

-- execution_error_class is a failed execution's error class: the first
-- non-empty part of its error between colons, parenthesised details
-- dropped and numbers, IDs and quoted text blanked, so "…: model x
-- failed 3 times (type: …): 503" and "… 4 times …: 500" are one class; an
-- execution that failed without a message is its stop reason.
CREATE FUNCTION execution_error_class(stop_reason text, error text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce((
        SELECT left(btrim(regexp_replace(regexp_replace(p, '"[^"]*"|''[^'']*''', '…', 'g'),
            '[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}|[0-9]+', 'N', 'g')), 120)
        FROM unnest(string_to_array(regexp_replace(coalesce(error, ''), '\([^)]*\)', '', 'g'), ':')) WITH ORDINALITY AS u(p, n)
        WHERE btrim(p) <> '' ORDER BY n LIMIT 1), coalesce(stop_reason, ''))
$$;

-- agent_execution_summary is one row per execution, kept by triggers in
-- the transaction of every write it sums, so search, statistics and
-- failure clusters read one row per execution and never scan entries per
-- request. Turns count the model calls that answered (a compaction's
-- summary call costs but is no turn); the last tool call is the one of
-- the highest step whose record changed last: the decision before a
-- failure.
CREATE TABLE agent_execution_summary (
    execution_id     UUID PRIMARY KEY REFERENCES agent_execution(id) ON DELETE CASCADE,
    turns            INTEGER NOT NULL DEFAULT 0,
    tool_calls       INTEGER NOT NULL DEFAULT 0,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    cost             DOUBLE PRECISION NOT NULL DEFAULT 0,
    models           TEXT[] NOT NULL DEFAULT '{}',
    tools            TEXT[] NOT NULL DEFAULT '{}',
    last_tool_name   TEXT NOT NULL DEFAULT '',
    last_tool_status TEXT NOT NULL DEFAULT '',
    last_tool_step   INTEGER NOT NULL DEFAULT 0,
    error_class      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX agent_execution_summary_tools ON agent_execution_summary USING GIN (tools);
CREATE INDEX agent_execution_summary_models ON agent_execution_summary USING GIN (models);
CREATE INDEX agent_execution_summary_cost ON agent_execution_summary (cost);
CREATE INDEX agent_execution_summary_error ON agent_execution_summary (error_class) WHERE error_class <> '';

CREATE FUNCTION summarise_execution() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO agent_execution_summary (execution_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    ELSE
        UPDATE agent_execution_summary SET error_class = execution_error_class(NEW.stop_reason, NEW.error)
        WHERE execution_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER agent_execution_summary_row AFTER INSERT ON agent_execution
    FOR EACH ROW EXECUTE FUNCTION summarise_execution();
CREATE TRIGGER agent_execution_summary_failed AFTER UPDATE OF status ON agent_execution
    FOR EACH ROW WHEN (NEW.status = 'FAILED' AND OLD.status IS DISTINCT FROM 'FAILED')
    EXECUTE FUNCTION summarise_execution();

-- A model call is read as usage reads it (model_call_usage, migration
-- 0017), its model keyed as entrystore's usageModelKey keys it.
CREATE FUNCTION summarise_model_call() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    c record;
    model text;
BEGIN
    SELECT * INTO c FROM model_call_usage(NEW.entry_type, NEW.content, NEW.metadata);
    IF c.m IS NULL THEN
        RETURN NULL;
    END IF;
    model := coalesce(c.m->'model'->>'provider', NEW.content->>'provider', '') || '/' ||
             coalesce(c.m->'model'->>'modelId', NEW.content->>'model', '');
    UPDATE agent_execution_summary s SET
        turns = s.turns + CASE WHEN coalesce(c.m->>'purpose', '') = '' THEN 1 ELSE 0 END,
        input_tokens = s.input_tokens + coalesce((c.u->>'input')::bigint, 0),
        output_tokens = s.output_tokens + coalesce((c.u->>'output')::bigint, 0),
        cost = s.cost + coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0),
        models = CASE WHEN model = ANY (s.models) THEN s.models ELSE s.models || model END
    WHERE execution_id = NEW.agent_execution_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER agent_entry_summary AFTER INSERT ON agent_entry
    FOR EACH ROW WHEN (NEW.entry_type = 'llm_call' OR (NEW.entry_type = 'message' AND NEW.role = 'assistant'))
    EXECUTE FUNCTION summarise_model_call();

CREATE FUNCTION summarise_tool_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE agent_execution_summary s SET
        tool_calls = s.tool_calls + CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE 0 END,
        tools = CASE WHEN NEW.tool_name = ANY (s.tools) THEN s.tools ELSE s.tools || NEW.tool_name END,
        last_tool_name = CASE WHEN NEW.step_number >= s.last_tool_step THEN NEW.tool_name ELSE s.last_tool_name END,
        last_tool_status = CASE WHEN NEW.step_number >= s.last_tool_step THEN NEW.status ELSE s.last_tool_status END,
        last_tool_step = greatest(s.last_tool_step, NEW.step_number)
    WHERE execution_id = NEW.agent_execution_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER agent_tool_call_summary AFTER INSERT OR UPDATE OF status ON agent_tool_call
    FOR EACH ROW EXECUTE FUNCTION summarise_tool_call();

-- Executions made before this migration get their rows from what the
-- store holds.
INSERT INTO agent_execution_summary (execution_id, turns, input_tokens, output_tokens, cost, models, error_class)
SELECT x.id,
       coalesce(m.turns, 0), coalesce(m.input, 0), coalesce(m.output, 0), coalesce(m.cost, 0), coalesce(m.models, '{}'),
       CASE WHEN x.status = 'FAILED' THEN execution_error_class(x.stop_reason, x.error) ELSE '' END
FROM agent_execution x
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE coalesce(c.m->>'purpose', '') = '') AS turns,
           sum(coalesce((c.u->>'input')::bigint, 0)) AS input,
           sum(coalesce((c.u->>'output')::bigint, 0)) AS output,
           sum(coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0)) AS cost,
           array_agg(DISTINCT coalesce(c.m->'model'->>'provider', e.content->>'provider', '') || '/' ||
                              coalesce(c.m->'model'->>'modelId', e.content->>'model', '')) AS models
    FROM agent_entry e CROSS JOIN LATERAL model_call_usage(e.entry_type, e.content, e.metadata) c
    WHERE e.agent_execution_id = x.id AND c.m IS NOT NULL
      AND (e.entry_type = 'llm_call' OR (e.entry_type = 'message' AND e.role = 'assistant'))
) m ON true;
UPDATE agent_execution_summary s SET tool_calls = t.n, tools = t.tools,
       last_tool_name = t.last[1], last_tool_status = t.last[2], last_tool_step = t.step
FROM (
    SELECT agent_execution_id, count(*) AS n, array_agg(DISTINCT tool_name) AS tools, max(step_number) AS step,
           ARRAY[(array_agg(tool_name ORDER BY step_number DESC, updated_at DESC))[1],
                 (array_agg(status ORDER BY step_number DESC, updated_at DESC))[1]] AS last
    FROM agent_tool_call GROUP BY agent_execution_id
) t WHERE s.execution_id = t.agent_execution_id;
