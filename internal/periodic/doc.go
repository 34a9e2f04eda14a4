// Package periodic runs the project's in-process background jobs one way:
// a job called every interval until its context ends, each call given the
// context, a failing call left to the job to log and the next one tried.
// Used by the gateway's stream pruning, the worker's reconciler, its
// capability lease and its workspace janitor. Work that must outlive a
// process (pruning ended executions) is a Temporal Schedule instead
// (adapter's prune schedule).
package periodic
