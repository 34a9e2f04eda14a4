-- Reserved: migration 16 is another branch's (issue 35 work runs in
-- parallel, and tern needs the sequence whole). Drop this file when that
-- branch's 0016_*.sql is merged.
SELECT 1;
