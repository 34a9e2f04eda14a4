-- A stale writer's fence (issue 42): the Temporal time of the newest
-- workflow task whose local activity appended an entry to the execution.
-- A workflow task the server timed out (its heartbeat lost in a Temporal
-- or Postgres hiccup) leaves its worker running the local activities it
-- had started; one that appends after a newer task has must not branch
-- the tree where that task went on (entrystore.WithWriteFence).
ALTER TABLE agent_execution ADD COLUMN write_fence TIMESTAMPTZ;
