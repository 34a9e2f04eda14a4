-- Entries' and checkpoints' documents are stored as json, the text the
-- writer sent, instead of jsonb (issue 18, storage). The store never
-- queries inside them on a hot path: the worker and the API read them
-- whole, so jsonb's parsed form only cost space (a checkpoint's small
-- state took 228 bytes as jsonb against 140 as text, a message 6% more
-- than its JSON) and CPU, to parse every write and print every read.
-- The few reads inside a document (a tool call's arguments, a result's
-- text, a compaction's boundary) use the json operators.
--
-- Rewrites both tables: on a large store, run it in a maintenance window.
ALTER TABLE agent_entry
    ALTER COLUMN content TYPE json USING content::json,
    ALTER COLUMN metadata TYPE json USING metadata::json;
ALTER TABLE agent_checkpoint
    ALTER COLUMN state DROP DEFAULT,
    ALTER COLUMN state TYPE json USING state::json,
    ALTER COLUMN state SET DEFAULT '{}'::json,
    ALTER COLUMN metadata TYPE json USING metadata::json;
