// Package migrations holds Agentree's forward-only SQL migrations
// (0001_….sql, zero-padded, never edited once released) and applies them.
//
// Migrations are embedded in the binary and applied by jackc/tern under a
// Postgres advisory lock, so any number of workers and gateways may start at
// once and exactly one of them migrates. It may import pgx and tern only.
package migrations
