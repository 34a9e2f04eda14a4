// Package netfault is a TCP proxy that tests put between a client and a
// real server (Postgres, Temporal) to cut the connection and restore it on
// command, or slow it (SetDelay): an outage or a slow server of the real
// thing, not a mock of it.
//
// It imports the standard library only.
package netfault
