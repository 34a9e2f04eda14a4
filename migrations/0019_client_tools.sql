-- Client tool calls (issue 38): a call to a tool the execution's client
-- runs itself waits, status awaiting_result, until the client sends its
-- output as a toolResult signal through the inbox; the partial unique
-- index refuses a second output for a call while the first is still in
-- the inbox, and the record (ended once the output is applied) refuses it
-- afterwards.
ALTER TABLE agent_tool_call DROP CONSTRAINT agent_tool_call_status_check;
ALTER TABLE agent_tool_call ADD CONSTRAINT agent_tool_call_status_check
    CHECK (status IN ('running','completed','error','cancelled','awaiting_approval','rejected','awaiting_result'));

CREATE UNIQUE INDEX agent_signal_one_tool_result ON agent_signal
    (agent_execution_id, (signal_value->>'toolCallId'))
    WHERE signal_name = 'toolResult' AND NOT consumed;
