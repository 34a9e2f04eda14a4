-- Placeholder on the debugcf branch only: tern refuses a gap before 0029.
-- Drop this file at merge; the real 0025 comes from its own branch.
SELECT 1;
