// Package layout holds tests of the module's import graph: the packages a
// client links (the gateway, the execution client, the samples' starters)
// never reach the worker's package, adapter, so a workflow change never
// rebuilds or redeploys them and they never register workflow code. It has
// no code of its own.
//
// It imports nothing.
package layout
