// Package storetest is the contract every implementation of the store port
// (step.Store) keeps: the Postgres store, the worker store and
// agenttest's in-memory one each run Contract from their own tests, so a
// behaviour the engine relies on is written down once and checked against
// all three.
//
// It imports agentsdk, agentsdk/event, internal/step, testify and the
// standard library.
package storetest
