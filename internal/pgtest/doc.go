// Package pgtest gives each test its own throw-away Postgres schema with
// Agentree's migrations applied, so tests (and benchmarks) against the real
// database run in parallel without seeing each other's rows.
//
// DATABASE_URL must point at a server the test may create schemas in; a test
// without it fails rather than skips, so a missing database never passes CI
// silently. It may import pgx and migrations only.
package pgtest
