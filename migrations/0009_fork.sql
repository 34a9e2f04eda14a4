-- Fork (issue 14): a new execution that shares the tree of another up to
-- an entry, by reference, and runs on from there. forked_from names the
-- execution, forked_from_entry the entry; the fork's first entry's parent
-- is that entry (entrystore allows a parent in the execution a fork or a
-- resume continues, and nowhere else).
ALTER TABLE agent_execution
    ADD COLUMN forked_from UUID REFERENCES agent_execution(id) ON DELETE SET NULL,
    ADD COLUMN forked_from_entry UUID;
CREATE INDEX agent_execution_forks ON agent_execution (forked_from, created_at DESC, id DESC) WHERE forked_from IS NOT NULL;
