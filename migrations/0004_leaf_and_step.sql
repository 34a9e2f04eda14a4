-- The execution's current leaf and every entry's step (issue 11).
--
-- leaf_entry_id is the entry appended last: the end of the active path,
-- moved in the same statement as every append (entrystore appendEntry), so
-- the conversation a page reload shows is one Path call from it and a fork
-- (an append under an earlier entry) moves the active path with it.
--
-- step is the number of assistant messages (model calls) on the path from
-- the root to the entry, the entry included: the first user prompt is step
-- 0, the first answer and the tool results it asked for step 1, and so on
-- (seed 001's step_number). It depends only on the entry's ancestors, so it
-- is computed once, from the parent's, when the entry is appended.

-- leaf_seq is the leaf's seq: of two appends racing for the row, the newer
-- entry wins whichever commits last. No foreign key: entries already
-- reference their execution, and a cycle would order every delete.
ALTER TABLE agent_execution ADD COLUMN leaf_entry_id UUID, ADD COLUMN leaf_seq BIGINT;
ALTER TABLE agent_entry ADD COLUMN step INTEGER NOT NULL DEFAULT 0;

-- Existing executions: the leaf is the entry written last.
UPDATE agent_execution x SET leaf_entry_id = last.id, leaf_seq = last.seq
FROM (
    SELECT DISTINCT ON (agent_execution_id) agent_execution_id, id, seq
    FROM agent_entry ORDER BY agent_execution_id, seq DESC
) last
WHERE last.agent_execution_id = x.id;

-- Existing entries: steps from the roots down.
WITH RECURSIVE walk (id, step) AS (
    SELECT id, CASE WHEN entry_type = 'message' AND role = 'assistant' THEN 1 ELSE 0 END
    FROM agent_entry WHERE parent_id IS NULL
    UNION ALL
    SELECT c.id, walk.step + CASE WHEN c.entry_type = 'message' AND c.role = 'assistant' THEN 1 ELSE 0 END
    FROM walk JOIN agent_entry c ON c.parent_id = walk.id
)
UPDATE agent_entry e SET step = walk.step FROM walk WHERE e.id = walk.id AND walk.step <> 0;
