// Package sampleenv is what the samples' worker and starter programs share:
// connecting to Postgres and Temporal the way `make env` describes, waiting
// for an execution to reach a state, and printing its live stream and its
// conversation. It keeps each sample's main.go down to what that sample
// teaches.
//
// It may import anything public of Agentree except the worker's package
// (adapter): starters use it, and they are clients (see sampleworker).
package sampleenv
