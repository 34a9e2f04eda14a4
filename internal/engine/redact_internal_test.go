package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// discard is a Logger that keeps nothing.
type discard struct{}

func (discard) Debug(string, ...any) {}
func (discard) Info(string, ...any)  {}
func (discard) Warn(string, ...any)  {}
func (discard) Error(string, ...any) {}

// TestTenantTextClassifiesAndCuts: a model error naming its URL becomes
// "model_unreachable" with the endpoint's name, one with a proxy's page
// "model_error" with its status only; short text without an address is
// kept as it is; the reference is the same for the same failure.
func TestTenantTextClassifiesAndCuts(t *testing.T) {
	refused := &agentsdk.ModelError{Provider: "local-vllm", Message: `Post "http://10.1.2.3:8000/v1/chat/completions": dial tcp 10.1.2.3:8000: connect: connection refused`, Retryable: true}
	got := tenantText(discard{}, "ex1", "execution", refused.Error(), refused)
	require.Regexp(t, "^model_unreachable: the model endpoint `local-vllm` is unreachable \\(ref [0-9a-f]{12}\\)$", got)
	require.Equal(t, got, tenantText(discard{}, "ex1", "execution", refused.Error(), refused))

	page := &agentsdk.ModelError{Provider: "gw", StatusCode: 502, Message: "<html>" + strings.Repeat("upstream 10.0.0.9 down ", 100) + "</html>"}
	wrapped := fmt.Errorf("model call: %w", page)
	require.Regexp(t, "^model_error: the model endpoint `gw` answered status 502 \\(ref [0-9a-f]{12}\\)$", tenantText(discard{}, "ex1", "execution", wrapped.Error(), wrapped))

	plain := errors.New("agent state is 5000 bytes, over the 4096-byte limit")
	require.Equal(t, plain.Error(), tenantText(discard{}, "ex1", "execution", plain.Error(), plain))
	pg := errors.New(`store: dial tcp db.internal:5432: i/o timeout`)
	require.Regexp(t, "^unreachable: ", tenantText(discard{}, "ex1", "execution", pg.Error(), pg))
}
