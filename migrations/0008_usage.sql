-- Usage (issue 14): an organization's model calls by time, for
-- GET /api/orgs/{org}/usage. Each llm_call entry's metadata holds its model,
-- tokens and cost.
CREATE INDEX agent_entry_llm_call ON agent_entry (org_id, created_at) WHERE entry_type = 'llm_call';
