// Package adapter is Agentree's Temporal plugin. It runs every agentsdk
// Agent as a workflow of its kind whose runs are short segments: a segment
// does one step of work, writes a checkpoint and continues-as-new, holding
// only a reference to the leaf of the conversation tree and a few KiB of
// state. Model and tool calls are activities that read the conversation from
// the Postgres side store by reference; store writes from the workflow are
// local activities; large payloads go through a Postgres-backed external
// storage driver. So a run's history stays small whatever the conversation's
// length. Each worker records what it serves (kinds, tools with their
// schemas, model endpoints) in the store on start and every few seconds,
// and removes it on a clean stop, so gateways validate requests against
// live workers.
//
// Failures are classed (errors.go): the store being unreachable is retried
// until it is back and never fails an execution or switches models; only
// model and tool failures use up attempts. Model and tool calls heartbeat on
// a timer, so a dead worker's call moves to another within its heartbeat
// timeout (5 s by default); its workflow tasks move within the worker's
// StickyScheduleToStartTimeout (the SDK's default, 5 s, is what workers
// here use) or the workflow task timeout (5 s, set at start). A Reconciler in every
// worker finishes what a crashed gateway left half done.
//
// The execution client (start, signal, cancel, wait) and the storage
// driver live in adapter/client, which the gateway, CLI and starters use
// without linking this package; it imports them, never the other way.
//
// A spawn_agents child may be a remote A2A agent of Options.RemoteAgents:
// an activity (RemoteAgentActivity) that records the remote task in the
// store before following it, so a retry re-attaches instead of sending the
// message again (remote.go, remote_activity.go).
//
// It imports agentsdk, entrystore, internal/engine, internal/step,
// internal/domain, adapter/client, the Temporal SDK and the official A2A
// Go SDK's client.
package adapter
