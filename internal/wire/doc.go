// Package wire holds what crosses between the programs that start
// executions and the workflows that run them: a segment's input, an
// execution's workflow result, the checkpoint a waiting segment hands over
// and the one signal name. A client (adapter/client, and through it the
// gateway and every starter) needs these to start and read executions; it
// must not need the engine that runs them, so they live here and the
// engine imports them.
//
// Their names and JSON shapes are recorded in every workflow history:
// changing one breaks the replay of running executions (the checked-in
// histories in adapter/testdata test it).
//
// It imports agentsdk only: never internal/engine, never Temporal.
package wire
