// Package engine is the one segment engine: it implements agentsdk.Context,
// runs an agent's segments, turns outcomes into checkpoints, waits and
// terminal statuses, falls back between models, keys every append and
// publishes the lifecycle events — the same code whichever runtime drives
// it. A runtime supplies a Port: how a durable step (model call, tool call,
// custom activity) and a store operation run, the clock, the logger and the
// signals. The Temporal plugin (adapter) binds the port to activities and
// local activities; agentsdk/agenttest binds it to direct calls.
//
// The types that cross between clients and workflows (SegmentInput,
// Result, SignalName) are internal/wire's, named here too: clients link
// that package, never this one.
//
// The statuses, the execution row, transitions, checkpoints and the
// conflict errors its Store speaks are internal/domain's, the same types
// every store returns, so a runtime hands them over unconverted.
//
// It imports agentsdk and its subpackages, internal/step (the model and
// tool steps, and the store port its Store extends), internal/wire and
// internal/domain; never Temporal, never Postgres.
package engine
