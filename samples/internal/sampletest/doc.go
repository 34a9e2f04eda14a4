// Package sampletest runs a sample against the real services in a test: a
// fresh Postgres schema, an organization, a Temporal client with the
// Agentree plugin and a worker on a task queue of its own, so samples' tests
// run in parallel with each other and with a running sample worker.
//
// TEMPORAL_ADDRESS and DATABASE_URL must be set (`eval "$(make -s env)"`);
// a test without them fails rather than skips. It may import anything of
// Agentree, internal/pgtest included.
package sampletest
