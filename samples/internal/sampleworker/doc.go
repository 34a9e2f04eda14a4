// Package sampleworker runs the samples' workers: the Agentree plugin on a
// Temporal worker, connected the way sampleenv connects. It is apart from
// sampleenv so that starters, which use only sampleenv, never link the
// worker's code (the adapter package).
//
// It imports adapter and sampleenv.
package sampleworker
