// Package domain is Agentree's domain model, defined once: an execution's
// status, the moves between statuses every store allows (MovesTo) and a
// move with what comes with it (Transition), the execution, checkpoint and
// entry rows, and the sentinel errors every store answers with. The
// Postgres store (entrystore), the worker store (adapter/workerstore),
// the in-memory store (agentsdk/agenttest), the engine, the Temporal
// plugin and the gateway all use these types, so a status or a checkpoint
// read from one store is handed to the engine as it is: nothing translates
// between copies, and errors.Is(err, ErrConflict) holds whichever store
// answered.
//
// entrystore is public and shows these types in its signatures, so it
// names them again as aliases (entrystore.Status is domain.Status): outside
// callers keep using entrystore's names.
//
// It imports the standard library only: every store and runtime links it,
// so it must link nothing heavy (internal/layout tests that).
package domain
