// Package agentsdk is what agent authors import: the Agent interface and the
// Context a segment runs with, provider-agnostic messages and content blocks,
// tools with JSON schemas, the model-provider interface, usage tracking, and
// the small State an agent carries from one segment to the next.
//
// An agent runs as a chain of short segments. Each segment is a function of
// (leaf entry, State): the agent looks at the leaf of the conversation tree,
// does one step of work through its Context (call a model, run tools), and
// returns an Outcome. The runtime — the Temporal adapter in production, the
// in-memory runtime in agenttest for unit tests — checkpoints and starts the
// next segment. Agent code runs inside a Temporal workflow, so it must be
// deterministic: no goroutines, clocks, randomness or I/O except through
// Context.
//
// agentsdk imports neither Temporal nor Postgres.
package agentsdk
