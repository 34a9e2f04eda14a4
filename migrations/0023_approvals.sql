-- Approvals as people use them (issue 40): a person who approves a call
-- may edit its arguments first (the call runs with them; the record keeps
-- both), and "always allow" may stand for a definition or a whole
-- organization, not only one execution.
ALTER TABLE agent_tool_call
    ADD COLUMN edited_arguments      JSONB,
    ADD COLUMN standing_approval_id  UUID;

-- A standing approval lets calls of tool_name run without waiting in any
-- execution of the organization, or of one definition (definition_id).
-- argument_pattern, when set, narrows it to calls whose command (shell
-- tools) matches it. Revoked rows stay for the audit.
CREATE TABLE standing_approval (
    id                UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id            UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    definition_id     UUID REFERENCES agent_definition(id) ON DELETE CASCADE,
    tool_name         TEXT NOT NULL,
    argument_pattern  TEXT,
    created_by        TEXT NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_by        TEXT,
    revoked_at        TIMESTAMPTZ,
    -- The decision (its toolApproval signal) that created it, so a
    -- retried decision creates none twice.
    signal_id         UUID UNIQUE
);
CREATE INDEX standing_approval_live ON standing_approval (org_id, tool_name) WHERE revoked_at IS NULL;
CREATE INDEX standing_approval_list ON standing_approval (org_id, created_at, id);
