-- Placeholder (branch workspace): tern needs contiguous versions, and 0025 is
-- another branch's this round. Drop this file at merge, when that branch's is in.
SELECT 1;
