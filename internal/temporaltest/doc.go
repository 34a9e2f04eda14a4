// Package temporaltest is what tests share to reach the Temporal dev
// server: its address (a missing one fails the test, never skips it), with
// Agentree's search attributes registered on it when the server was
// started without them, a logger that keeps the SDK's chatter out of test
// output, and free ports for a private Temporal server of
// `AGENTREE_TEMPORAL=server scripts/services.sh` (scripts' tests,
// tools/chaos), and the Temporal CLI they start servers with. It imports the Temporal SDK and the adapter's client
// package (for the search attributes' names).
package temporaltest
