package agentreev1

import _ "embed"

// HTTPRules is agentree_http.yaml, the HTTP mapping of AgentService's RPCs.
// The gateway reads it beside each RPC's access option (access.proto) to
// know, per route, the role it needs and how it honours Idempotency-Key.
//
//go:embed agentree_http.yaml
var HTTPRules []byte
