-- Idempotency-Key records (issue 19): the first response to a mutating
-- request (create, signal, cancel), replayed to a retry with the same key.
--
-- A row is written BEFORE the effect (status NULL, locked_until = a lease)
-- and completed after it. effect_id is chosen at reservation and is the ID
-- the effect uses (a created execution's ID), so a retry that takes over a
-- reservation whose request died re-runs an effect that is keyed and
-- therefore happens once. Rows expire after a TTL (the gateway's
-- IdempotencyTTL, default 24 h); they are pruned lazily.

CREATE TABLE idempotency_key (
    org_id       UUID NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,          -- sha256 of method, path and body
    effect_id    UUID NOT NULL,
    status       INT,                    -- NULL while the request is in flight
    body         BYTEA,
    locked_until TIMESTAMPTZ,            -- the in-flight request's lease
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_key_expiry ON idempotency_key (expires_at);
