-- Per-tool approvals (issue 12): a tool call whose policy is "ask" waits,
-- status awaiting_approval, until a person approves it (it then runs as
-- any call) or rejects it (status rejected; it never runs).
--
-- The decision lives on the call's record: who decided, when, why, and
-- whether the tool is approved for the rest of the execution. It arrives
-- as a toolApproval signal through the inbox; the partial unique index
-- refuses a second decision on a call while the first is still in the
-- inbox, and the record's decision (set before the signal is consumed)
-- refuses it afterwards.
ALTER TABLE agent_tool_call DROP CONSTRAINT agent_tool_call_status_check;
ALTER TABLE agent_tool_call ADD CONSTRAINT agent_tool_call_status_check
    CHECK (status IN ('running','completed','error','cancelled','awaiting_approval','rejected'));

ALTER TABLE agent_tool_call
    ADD COLUMN policy                TEXT CHECK (policy IN ('auto','ask','forbid')),
    ADD COLUMN risk                  TEXT,
    ADD COLUMN approval_requested_at TIMESTAMPTZ,
    ADD COLUMN decision              TEXT CHECK (decision IN ('approve','reject')),
    ADD COLUMN decision_reason       TEXT,
    ADD COLUMN decided_by            TEXT,
    ADD COLUMN decided_at            TIMESTAMPTZ,
    ADD COLUMN always_allow          BOOLEAN NOT NULL DEFAULT false;

CREATE UNIQUE INDEX agent_signal_one_decision ON agent_signal
    (agent_execution_id, (signal_value->>'toolCallId'))
    WHERE signal_name = 'toolApproval' AND NOT consumed;
