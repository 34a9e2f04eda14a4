package temporaltest

import (
	"fmt"
	"os"
	"testing"
)

// Address is $TEMPORAL_ADDRESS; the test fails when it is not set.
func Address(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("TEMPORAL_ADDRESS")
	if addr == "" {
		t.Fatal("TEMPORAL_ADDRESS is not set: run `make up` and `eval \"$(make -s env)\"`")
	}
	return addr
}

// Logger is a Temporal logger that drops debug, info and warnings and
// prints errors, so test output shows what went wrong and nothing else.
type Logger struct{}

func (Logger) Debug(string, ...any) {}
func (Logger) Info(string, ...any)  {}
func (Logger) Warn(string, ...any)  {}

// Error prints the SDK's error with its key-values.
func (Logger) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"temporal:", msg}, kv...)...)
}
