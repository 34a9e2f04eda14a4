// Package step holds the two units of work every runtime runs the same way:
// a model call and a tool call. The Temporal adapter runs them as
// activities; agenttest runs them in memory. Each reads what it needs from
// an agentsdk.Store by reference (never the conversation from its input),
// writes its entries with idempotency keys, and returns only references, so
// a retried step never repeats work already recorded.
//
// It imports agentsdk only.
package step
