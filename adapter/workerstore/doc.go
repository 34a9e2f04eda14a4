// Package workerstore is the worker store: the side store of worker-held
// executions (persistenceMode "local", seed 000, "Execution Modes"): their entries,
// content, checkpoints and tool-call records live in one SQLite file on
// the worker (pure Go, modernc.org/sqlite), so a coding agent's gigabytes
// never reach the shared Postgres. The execution row, its status, signals
// and live stream stay in Postgres. The adapter routes a worker-held
// execution's work to the worker that holds its file, and answers the
// API's reads of it (read.go: the same lists, orders and paging as the
// Postgres store's) from there.
//
// It imports agentsdk, internal/domain (the checkpoint and the conflict
// error every store shares) and the SQLite driver only.
package workerstore
