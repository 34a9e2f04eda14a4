// Package step holds the two units of work every runtime runs the same way:
// a model call and a tool call. The Temporal adapter runs them as
// activities; agenttest runs them in memory. Each reads what it needs from
// the store port (Store) by reference (never the conversation from its
// input), writes its entries with idempotency keys, and returns only
// references, so a retried step never repeats work already recorded.
//
// It is the runtime's, not the SDK's: agent authors call a model or a tool
// through agentsdk.Context and never see a step or the Store. The port
// lives here, beside the steps that read and write through it, rather
// than in the engine (which imports this package) or in internal/domain
// (which holds plain types and links nothing but the standard library).
//
// A stored entry (internal/domain's row) becomes the agentsdk.Entry agents
// see here, and back (entry.go): the one conversion between the two.
//
// It imports agentsdk and its subpackages and internal/domain only.
package step
