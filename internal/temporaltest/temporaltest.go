package temporaltest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	aclient "github.com/agentree/agentree/adapter/client"
)

// Address is $TEMPORAL_ADDRESS; the test fails when it is not set, or when
// the server lacks Agentree's search attributes and they cannot be added.
func Address(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("TEMPORAL_ADDRESS")
	if addr == "" {
		t.Fatal("TEMPORAL_ADDRESS is not set: run `make up` and `eval \"$(make -s env)\"`")
	}
	registered.Do(func() { registerErr = registerSearchAttributes(addr) })
	if registerErr != nil {
		t.Fatal(registerErr)
	}
	return addr
}

var (
	registered  sync.Once
	registerErr error
)

// registerSearchAttributes adds the search attributes every agent workflow
// carries (aclient.SearchAttributeNames) to the default namespace when the
// server lacks them — a dev server started without `make up`'s flags —
// and waits until the server reports them.
func registerSearchAttributes(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tc, err := client.Dial(client.Options{HostPort: addr, Logger: Logger{}})
	if err != nil {
		return fmt.Errorf("temporaltest: dial %s: %w", addr, err)
	}
	defer tc.Close()
	ops := tc.OperatorService()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for added := false; ; {
		list, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
		if err != nil {
			return fmt.Errorf("temporaltest: list search attributes: %w", err)
		}
		missing := map[string]enumspb.IndexedValueType{}
		for _, name := range aclient.SearchAttributeNames {
			if _, ok := list.CustomAttributes[name]; !ok {
				missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if !added {
			_, err := ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: "default", SearchAttributes: missing})
			if err != nil {
				return fmt.Errorf("temporaltest: add search attributes: %w", err)
			}
			added = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporaltest: search attributes %v never appeared: %w", missing, ctx.Err())
		case <-tick.C:
		}
	}
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
