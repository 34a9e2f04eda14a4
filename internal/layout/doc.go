// Package layout holds tests of the module's import graph (go list -deps):
// the packages a client links (the gateway, the execution client, the
// samples' starters) never reach the worker's package, adapter, nor the
// engine or Temporal's workflow package, so a workflow change never
// rebuilds or redeploys them and they never register workflow code; the
// SDK (agentsdk) never reaches the runtime under internal/; samples talk
// to Agentree through its clients, never pgx or entrystore. Each failure
// names the import chain to cut. It also checks that the README's Layout
// table lists every package of the module, and nothing that is gone. It
// has no code of its own.
//
// It imports nothing.
package layout
