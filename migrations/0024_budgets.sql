-- Budgets per execution and per definition (issue 40): config.budget caps
-- an execution's tokens and cost, a definition's config.budget caps each of
-- its executions and, with totalMaxTokens/totalMaxCostUsd, all of them
-- together. The org quota of 0017 is the third budget; all three are
-- checked before every model call by one query (entrystore.Budgets).
--
-- execution_spend: what each execution's model calls, and its
-- descendants' (children roll up into their parent), have spent. A resume
-- starts from the paused execution's spend, so a raised cap is a raise, not
-- a fresh budget. definition_spend: what each definition's executions spent.
-- Both are kept by the trigger that keeps org_usage_day, for the same
-- reason (a check before a model call is a few primary-key reads, not a
-- scan of the calls), and like it they count an entry once: a retried
-- model call finds its entry by idempotency key and inserts nothing.
CREATE TABLE execution_spend (
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID PRIMARY KEY REFERENCES agent_execution(id) ON DELETE CASCADE,
    tokens              BIGINT NOT NULL DEFAULT 0,
    cost                DOUBLE PRECISION NOT NULL DEFAULT 0
);

CREATE TABLE definition_spend (
    org_id               UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_definition_id  UUID PRIMARY KEY REFERENCES agent_definition(id) ON DELETE CASCADE,
    tokens               BIGINT NOT NULL DEFAULT 0,
    cost                 DOUBLE PRECISION NOT NULL DEFAULT 0
);

-- count_spend replaces count_org_usage_day: one reading of the call
-- (model_call_usage), three sums. The execution's ancestors are upserted
-- leaf first, so two calls in one tree lock its rows in the same order.
CREATE FUNCTION count_spend() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    c record;
    tok bigint;
    usd float8;
BEGIN
    SELECT * INTO c FROM model_call_usage(NEW.entry_type, NEW.content, NEW.metadata);
    IF c.m IS NULL THEN
        RETURN NULL;
    END IF;
    tok := coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0);
    usd := coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0);
    INSERT INTO org_usage_day AS d (org_id, day, tokens, cost)
    VALUES (NEW.org_id, (NEW.created_at AT TIME ZONE 'UTC')::date, tok, usd)
    ON CONFLICT (org_id, day) DO UPDATE SET tokens = d.tokens + EXCLUDED.tokens, cost = d.cost + EXCLUDED.cost;
    INSERT INTO execution_spend AS s (org_id, agent_execution_id, tokens, cost)
    WITH RECURSIVE chain(id, parent_id, depth) AS (
        SELECT id, parent_id, 0 FROM agent_execution WHERE id = NEW.agent_execution_id
        UNION ALL
        SELECT x.id, x.parent_id, ch.depth + 1 FROM agent_execution x JOIN chain ch ON x.id = ch.parent_id WHERE ch.depth < 64
    )
    SELECT NEW.org_id, id, tok, usd FROM chain ORDER BY depth
    ON CONFLICT (agent_execution_id) DO UPDATE SET tokens = s.tokens + EXCLUDED.tokens, cost = s.cost + EXCLUDED.cost;
    INSERT INTO definition_spend AS s (org_id, agent_definition_id, tokens, cost)
    SELECT NEW.org_id, x.agent_definition_id, tok, usd FROM agent_execution x
    WHERE x.id = NEW.agent_execution_id AND x.agent_definition_id IS NOT NULL
    ON CONFLICT (agent_definition_id) DO UPDATE SET tokens = s.tokens + EXCLUDED.tokens, cost = s.cost + EXCLUDED.cost;
    RETURN NULL;
END
$$;

DROP TRIGGER agent_entry_org_usage_day ON agent_entry;
DROP FUNCTION count_org_usage_day();
CREATE TRIGGER agent_entry_spend AFTER INSERT ON agent_entry
    FOR EACH ROW WHEN (NEW.entry_type = 'llm_call' OR (NEW.entry_type = 'message' AND NEW.role = 'assistant'))
    EXECUTE FUNCTION count_spend();

-- A resumed execution carries the paused one's spend.
CREATE FUNCTION carry_spend() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO execution_spend (org_id, agent_execution_id, tokens, cost)
    SELECT NEW.org_id, NEW.id, tokens, cost FROM execution_spend WHERE agent_execution_id = NEW.resumed_from
    ON CONFLICT (agent_execution_id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER agent_execution_carry_spend AFTER INSERT ON agent_execution
    FOR EACH ROW WHEN (NEW.resumed_from IS NOT NULL)
    EXECUTE FUNCTION carry_spend();

-- What was spent before the upgrade, so a budget set on a resume sees it.
-- A resume's carried spend is not rebuilt for executions resumed before
-- the upgrade (they had no budget to carry).
INSERT INTO execution_spend (org_id, agent_execution_id, tokens, cost)
WITH RECURSIVE own AS (
    SELECT e.org_id, e.agent_execution_id AS id,
           sum(coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0)) AS tokens,
           sum(coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0)) AS cost
    FROM agent_entry e CROSS JOIN LATERAL model_call_usage(e.entry_type, e.content, e.metadata) c
    WHERE (e.entry_type = 'llm_call' OR (e.entry_type = 'message' AND e.role = 'assistant')) AND c.m IS NOT NULL
    GROUP BY 1, 2
), up(org_id, id, tokens, cost, depth) AS (
    SELECT org_id, id, tokens, cost, 0 FROM own
    UNION ALL
    SELECT up.org_id, x.parent_id, up.tokens, up.cost, up.depth + 1
    FROM up JOIN agent_execution x ON x.id = up.id WHERE x.parent_id IS NOT NULL AND up.depth < 64
)
SELECT org_id, id, sum(tokens), sum(cost) FROM up GROUP BY 1, 2;

INSERT INTO definition_spend (org_id, agent_definition_id, tokens, cost)
SELECT e.org_id, x.agent_definition_id,
       sum(coalesce((c.u->>'input')::bigint, 0) + coalesce((c.u->>'output')::bigint, 0)),
       sum(coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8, 0))
FROM agent_entry e CROSS JOIN LATERAL model_call_usage(e.entry_type, e.content, e.metadata) c
JOIN agent_execution x ON x.id = e.agent_execution_id
WHERE (e.entry_type = 'llm_call' OR (e.entry_type = 'message' AND e.role = 'assistant')) AND c.m IS NOT NULL
  AND x.agent_definition_id IS NOT NULL
GROUP BY 1, 2;
