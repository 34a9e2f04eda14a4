-- Remote A2A agents as sub-agents (issue 39): the remote task a
-- spawn_agents child started, keyed by the child (execution, tool call,
-- index in the call). The row is written, with the message ID, before
-- the message is sent, and the remote's task ID right after: a retried
-- activity (a worker that died mid-call) finds the task ID and re-attaches
-- to that task instead of sending the message again.
CREATE TABLE agent_remote_task (
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    tool_call_id        TEXT NOT NULL,
    child_index         INT  NOT NULL,
    remote_agent        TEXT NOT NULL,
    message_id          TEXT NOT NULL,
    task_id             TEXT,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, agent_execution_id, tool_call_id, child_index)
);
