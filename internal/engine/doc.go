// Package engine is the one segment engine: it implements agentsdk.Context,
// runs an agent's segments, turns outcomes into checkpoints, waits and
// terminal statuses, falls back between models, keys every append and
// publishes the lifecycle events — the same code whichever runtime drives
// it. A runtime supplies a Port: how a durable step (model call, tool call,
// custom task) and a store operation run, the clock, the logger and the
// signals. The Temporal plugin (adapter) binds the port to activities and
// local activities; agentsdk/agenttest binds it to direct calls.
//
// It also holds the types that cross the runtime boundary (SegmentInput,
// Result, SignalName), so clients can start and read executions without
// importing the workflow package.
//
// It imports agentsdk and its subpackages; never Temporal, never Postgres.
package engine
