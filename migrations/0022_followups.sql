-- Scheduled follow-ups (issue 40): a user message to deliver to an
-- execution at a time. A small Temporal workflow per follow-up waits on a
-- timer and then delivers it through the signals inbox, as a client's
-- message is: the row says what was asked and what became of it.
-- status: scheduled → delivered (signal_id names its inbox row),
-- cancelled (by a client, before it was due) or undelivered (the
-- execution had ended; error says so).
CREATE TABLE agent_followup (
    id                  UUID PRIMARY KEY,
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    text                TEXT NOT NULL,
    deliver_at          TIMESTAMPTZ NOT NULL,
    status              TEXT NOT NULL DEFAULT 'scheduled'
                        CHECK (status IN ('scheduled', 'delivered', 'cancelled', 'undelivered')),
    signal_id           UUID,
    error               TEXT NOT NULL DEFAULT '',
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_followup_execution ON agent_followup (org_id, agent_execution_id, created_at, id);
