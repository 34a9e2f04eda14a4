// Package sampleworker runs the samples' workers: the Agentree plugin on a
// Temporal worker and, in the same process, the REST gateway for the
// sample's task queue, as `agentree dev` runs both. Starters talk to that
// gateway through the REST client only (sampleenv.Connect finds it). It is
// apart from sampleenv so that starters, which use only sampleenv, never
// link the worker's code (the adapter package).
//
// It imports adapter, gateway, sampleenv and the Temporal SDK; never pgx
// or entrystore (adapter.OpenStore opens the store).
package sampleworker
