package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// An execution's errorMessage, its agent.failed event and a model call's
// fallbackReason are read by tenants; a model endpoint's failure text is
// not for them: it names the endpoint's URL and address ("Post
// \"http://10.0.0.7:8000/v1/chat/completions\": dial tcp …") or carries a
// proxy's page. tenantText is the one place such text is cut down: a
// stable class, a short message naming the endpoint, and a reference that
// the worker's log line with the full text carries too.

// maxTenantText is the longest failure text kept as it is.
const maxTenantText = 300

var (
	// addressPattern matches what must not reach a tenant: URLs, IPv4
	// and bracketed IPv6 addresses, host:port pairs.
	addressPattern = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://\S+|\[[0-9a-f:.]+\](:\d+)?|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b|\b[a-z][a-z0-9.-]*:\d{2,5}\b`)
	// statusPattern finds the HTTP status of a model error's text
	// (agentsdk.ModelError: "<endpoint>: status 502: …").
	statusPattern = regexp.MustCompile(`\bstatus (\d{3})\b`)
	// endpointPattern finds the endpoint a model error's text names
	// first (agentsdk.ModelError: "<endpoint>: …", after "<model> failed
	// N times: " when its attempts ran out).
	endpointPattern = regexp.MustCompile(`^(?:\S+ failed \d+ times: )?([A-Za-z0-9][A-Za-z0-9_.\-]*): `)
)

// tenantText returns what tenants read of a failure err described as
// text, and logs err's whole text under the same reference when it cut
// anything. Text no longer than maxTenantText from an error whose chain
// names no address is kept as it is: it says nothing of the deployment.
func tenantText(log agentsdk.Logger, executionID, what, text string, err error) string {
	full := err.Error()
	if len(text) <= maxTenantText && !addressPattern.MatchString(text) && !addressPattern.MatchString(full) {
		return text
	}
	sum := sha256.Sum256([]byte(executionID + "\x00" + text))
	ref := hex.EncodeToString(sum[:6])
	log.Warn("failure text redacted for tenants", "what", what, "ref", ref, "error", full)
	name := endpointOf(err)
	endpoint := fmt.Sprintf("the model endpoint `%s`", name)
	var class, msg string
	switch m := statusPattern.FindStringSubmatch(full); {
	case name == "" && addressPattern.MatchString(full):
		class, msg = "unreachable", "a service the worker depends on failed"
	case name != "" && m != nil:
		class, msg = "model_error", fmt.Sprintf("%s answered status %s", endpoint, m[1])
	case addressPattern.MatchString(text) || addressPattern.MatchString(full):
		class, msg = "model_unreachable", endpoint+" is unreachable"
	default:
		class, msg = "error", strings.ToValidUTF8(strings.TrimSpace(text[:min(len(text), maxTenantText)]), "")+" …"
	}
	return fmt.Sprintf("%s: %s (ref %s)", class, msg, ref)
}

// endpointOf is the name of the model endpoint err came from: its
// agentsdk.ModelError's, else, when the error crossed a runtime as text
// (an application error typed as a model's, such as the adapter's
// AgentreeModelError), the endpoint its message names first.
func endpointOf(err error) string {
	if me, ok := agentsdk.AsModelError(err); ok {
		return me.Provider
	}
	for ; err != nil; err = errors.Unwrap(err) {
		typed, ok := err.(interface {
			Type() string
			Message() string
		})
		if !ok || !strings.Contains(typed.Type(), "Model") {
			continue
		}
		if m := endpointPattern.FindStringSubmatch(typed.Message()); m != nil && !addressPattern.MatchString(m[1]) {
			return m[1]
		}
	}
	return ""
}
