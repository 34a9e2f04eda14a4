// Package client is Agentree's execution client: what a gateway, a CLI or a
// program that starts agents needs, and nothing a worker runs. It starts
// executions (the store first, then Temporal), signals and cancels them,
// waits for their results, and names the workflow conventions (workflow ID
// = execution ID, start options). Its StorageDriver reads back payloads
// workers offloaded to the Postgres content store, so a client can read
// large results.
//
// It imports internal/wire (the types SegmentInput, Result and SignalName),
// entrystore, agentsdk and the Temporal client SDK; never internal/engine,
// the workflow package or the adapter package (the worker's plugin and
// workflows), which imports it.
package client
