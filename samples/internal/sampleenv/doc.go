// Package sampleenv is what the samples' starters share: finding the REST
// gateway their sample's worker serves (Connect) and talking to it with the
// REST client — creating executions, signalling, cancelling, following an
// execution's live stream and printing it and its conversation. It keeps
// each sample's main.go down to what that sample teaches.
//
// It imports apiclient, the generated API types, agentsdk (the SDK's types
// and event decoding) and the Temporal client (for a starter that starts
// workflows of its own); never pgx, entrystore or the worker's packages:
// a starter is a client (see sampleworker).
package sampleenv
