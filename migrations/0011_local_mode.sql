-- Local persistence mode (issue 16): an execution in persistenceMode
-- "local" keeps its entries, content and checkpoints in a store on the
-- worker that first ran it. local_worker names that worker and local_queue
-- the task queue only it polls; local_missing_since is when a reconciler
-- first found no live worker on that queue (cleared when it is back), so
-- the grace period survives reconciler restarts.
ALTER TABLE agent_execution
    ADD COLUMN local_worker TEXT,
    ADD COLUMN local_queue TEXT,
    ADD COLUMN local_missing_since TIMESTAMPTZ;
CREATE INDEX agent_execution_local ON agent_execution (local_queue)
    WHERE local_queue IS NOT NULL AND status IN ('PENDING', 'RUNNING', 'WAITING', 'CANCELLING');
