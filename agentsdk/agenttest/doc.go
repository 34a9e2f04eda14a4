// Package agenttest is an in-memory runtime for unit-testing agents: no
// Temporal server, no Postgres. It runs an agent's segments the way the
// Temporal adapter does — same model and tool steps (internal/step), same
// idempotency keys, same outcomes — over an in-memory store, so an agent
// author can drive an execution with signals and assert on its entries.
//
// An execution's Status is internal/domain's, named here as an alias (and
// its constants as agenttest's), so a test reads it as the store keeps it.
//
// It imports agentsdk, and (the one part of agentsdk that may) the
// runtime under internal/: the engine, the steps and store port
// (internal/step) and the domain model it shares with the other stores
// (internal/domain).
package agenttest
