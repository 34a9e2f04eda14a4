-- An execution's first prompt is stored once (issue 18, storage): its
-- input entry (idempotency key '{execution}/input') holds it, so the
-- row's input drops its userPrompt once that entry is appended (entrystore
-- insertEntrySQL), and every read of the row puts it back from the entry
-- (execution_input). A long first prompt — a pasted document — was stored
-- twice. A local execution's entries live on its worker: its row keeps
-- the prompt.
CREATE FUNCTION execution_input(input jsonb, execution uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN input IS NULL OR input ? 'userPrompt' THEN input
        ELSE input || jsonb_build_object('userPrompt', (
            SELECT e.content->'content'->0->>'text' FROM agent_entry e
            WHERE e.agent_execution_id = execution AND e.idempotency_key = execution::text || '/input'))
    END
$$;

UPDATE agent_execution x SET input = x.input - 'userPrompt'
WHERE x.input ? 'userPrompt' AND x.input->>'userPrompt' = (
    SELECT e.content->'content'->0->>'text' FROM agent_entry e
    WHERE e.agent_execution_id = x.id AND e.idempotency_key = x.id::text || '/input');
