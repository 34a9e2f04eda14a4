-- PAUSED and resume (issue 15, seed 001).
--
-- An execution that spends its step budget (config.maxSteps) ends PAUSED,
-- a final status like COMPLETED: its workflow has ended. A resume is a new
-- execution with resumed_from set that continues the same conversation
-- tree from the paused leaf, by reference: its first entry's parent is an
-- entry of the execution it resumes (entrystore allows exactly that one
-- cross-execution parent). Each paused execution is resumed at most once.
ALTER TABLE agent_execution DROP CONSTRAINT agent_execution_status_check;
ALTER TABLE agent_execution ADD CONSTRAINT agent_execution_status_check
    CHECK (status IN ('PENDING','RUNNING','WAITING','CANCELLING','COMPLETED','FAILED','CANCELLED','PAUSED'));
CREATE UNIQUE INDEX agent_execution_one_resume ON agent_execution (resumed_from) WHERE resumed_from IS NOT NULL;
