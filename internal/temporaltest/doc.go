// Package temporaltest is what tests share to reach the Temporal dev
// server: its address (a missing one fails the test, never skips it) and a
// logger that keeps the SDK's chatter out of test output. It imports the
// Temporal SDK's log interface only.
package temporaltest
