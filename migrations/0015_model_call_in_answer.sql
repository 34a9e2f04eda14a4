-- A model call's record is folded into the assistant entry it wrote
-- (issue 18, storage: one row per call, not two); a compaction's summary
-- call keeps its llm_call entry. Usage sums both (entrystore modelCalls),
-- so the organization's usage by time indexes both.
CREATE INDEX agent_entry_model_call ON agent_entry (org_id, created_at)
    WHERE entry_type = 'llm_call' OR (entry_type = 'message' AND role = 'assistant');
DROP INDEX agent_entry_llm_call;
