-- Reserved: migration 17 is another branch's (issue 35 work runs in
-- parallel, and tern needs the sequence whole). Drop this file when that
-- branch's 0017_*.sql is merged.
SELECT 1;
