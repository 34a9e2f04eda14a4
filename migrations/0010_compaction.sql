-- Compaction (issue 14): a model call reads the path only from the latest
-- compaction's first kept entry. Finding that compaction is one probe of
-- this index per branch of the path, however long the conversation.
CREATE INDEX agent_entry_compaction ON agent_entry (branch_id, depth DESC) WHERE entry_type = 'compaction';
