-- Placeholder for migration 0024, which another branch of this round owns
-- (see /work/briefs/common.md); dropped when the branches merge, so the
-- debugapi branch's 0027 applies in order on its own.
SELECT 1;
