// Package agenttest is an in-memory runtime for unit-testing agents: no
// Temporal server, no Postgres. It runs an agent's segments the way the
// Temporal adapter does — same model and tool steps (package step), same
// idempotency keys, same outcomes — over an in-memory store, so an agent
// author can drive an execution with signals and assert on its entries.
//
// It imports agentsdk and its step package only.
package agenttest
