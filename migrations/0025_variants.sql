-- Variants, branching in one execution and injection entries (issue 40).
--
-- A variant is a named view of one execution's tree: its own leaf, entries
-- it leaves out of the model's context, and a model that replaces the one
-- the agent asks for. An execution without a row here has only its
-- implicit default variant ("main": the whole path, no override), which is
-- how every execution before this migration reads. The active variant's
-- leaf is the execution's own (leaf_entry_id): leaf_entry_id here is where
-- a variant stood when another became active, so switching back finds it.
CREATE TABLE agent_variant (
    id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    name                TEXT NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
    leaf_entry_id       UUID,
    excluded_entry_ids  UUID[] NOT NULL DEFAULT '{}',
    model_override      JSONB,
    -- The variant an automatic fork copied (an exclusion or injection edit
    -- that would have rewritten what an earlier model call saw).
    forked_from         UUID REFERENCES agent_variant(id) ON DELETE SET NULL,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (agent_execution_id, name)
);
CREATE INDEX agent_variant_org ON agent_variant (org_id, agent_execution_id, created_at, id);

-- active_variant_id: the variant whose view the model calls get (NULL: the
-- default). branch_from/branch_to: the seam that moves a waiting
-- execution's leaf. Its workflow holds the leaf it waited at
-- (branch_from); the next signal it consumes there is appended under
-- branch_to instead, so the conversation goes on from the entry a branch,
-- a variant switch or a promotion moved to, without a workflow change.
-- No foreign keys, as for leaf_entry_id: a cycle would order every delete.
ALTER TABLE agent_execution
    ADD COLUMN active_variant_id UUID,
    ADD COLUMN branch_from UUID,
    ADD COLUMN branch_to UUID;

-- Injection entries are immutable like every entry; an edit or a delete
-- retires one (an edit names the entry that replaces it), so the audit of
-- what the model was told, and when, stays in the tree.
CREATE TABLE agent_entry_retired (
    entry_id            UUID PRIMARY KEY REFERENCES agent_entry(id) ON DELETE CASCADE,
    org_id              UUID NOT NULL REFERENCES organization(id) ON DELETE CASCADE,
    agent_execution_id  UUID NOT NULL REFERENCES agent_execution(id) ON DELETE CASCADE,
    replaced_by         UUID,
    retired_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_entry_injection ON agent_entry (agent_execution_id, seq) WHERE entry_type = 'injection';
