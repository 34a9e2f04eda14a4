-- Roles and expiry on API keys (issue 36). A key carries one or more of
-- admin (keys, retention, definitions, quotas), run (create, signal,
-- cancel, fork, resume, compact), approve (tool approvals) and read
-- (everything read-only); the gateway checks them against each RPC's
-- declared role (proto/agentree/v1/access.proto).
--
-- Keys minted before roles existed could do everything, so they get all
-- four and nothing that works today breaks. The default stays for the same
-- reason: a binary from before this migration, still running during an
-- upgrade, mints keys as it always did; this one always names the roles.
ALTER TABLE api_key
    ADD COLUMN roles TEXT[] NOT NULL DEFAULT ARRAY['admin', 'run', 'approve', 'read'],
    ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE api_key ADD CONSTRAINT api_key_roles_known
    CHECK (cardinality(roles) >= 1 AND roles <@ ARRAY['admin', 'run', 'approve', 'read']);
