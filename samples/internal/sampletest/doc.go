// Package sampletest runs a sample against the real services in a test, as
// its worker and starter do: a fresh Postgres schema, a Temporal client
// with the Agentree plugin, a worker on a task queue of its own and the
// REST gateway for it (sampleworker's), and a REST client of an
// organization of the test's own. Samples' tests so run in parallel with
// each other and with a running sample worker, and drive the sample
// through the same REST calls its starter makes. NewGateway leaves the
// workers to the test: in its process (StartWorker) or as processes it can
// kill (a test binary that runs RunWorker).
//
// TEMPORAL_ADDRESS and DATABASE_URL must be set (`eval "$(make -s env)"`);
// a test without them fails rather than skips. It imports adapter,
// gateway, sampleworker, sampleenv, apiclient and the test services
// (internal/pgtest, internal/temporaltest); never pgx or entrystore.
package sampletest
