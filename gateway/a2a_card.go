package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentree/agentree/entrystore"
)

// a2aCard is an A2A agent card (protocol 0.3.0), as far as it is filled.
type a2aCard struct {
	ProtocolVersion    string                  `json:"protocolVersion"`
	Name               string                  `json:"name"`
	Description        string                  `json:"description"`
	URL                string                  `json:"url"`
	PreferredTransport string                  `json:"preferredTransport"`
	Version            string                  `json:"version"`
	Capabilities       a2aCapabilities         `json:"capabilities"`
	SecuritySchemes    map[string]a2aSecScheme `json:"securitySchemes"`
	Security           []map[string][]string   `json:"security"`
	DefaultInputModes  []string                `json:"defaultInputModes"`
	DefaultOutputModes []string                `json:"defaultOutputModes"`
	Skills             []a2aSkill              `json:"skills"`
	SupportsExtended   bool                    `json:"supportsAuthenticatedExtendedCard"`
}

type a2aCapabilities struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

type a2aSecScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme"`
	Description string `json:"description"`
}

type a2aSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// a2aKeyScheme names the card's one security scheme.
const a2aKeyScheme = "agentreeApiKey"

// serveA2ACard serves the definition's agent card. The card is per
// caller's organization, so it is read with the key like the rest.
func (s *service) serveA2ACard(w http.ResponseWriter, r *http.Request, a a2aAgent) {
	if !a.key.Has(entrystore.RoleRead) {
		writeError(w, http.StatusForbidden, "permission_denied",
			(&permissionDenied{role: entrystore.RoleRead, what: "reading an agent card"}).Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(a2aCardOf(a.def, a2aBaseURL(r)))
}

// a2aCardOf is d's card, served at base.
func a2aCardOf(d entrystore.Definition, base string) a2aCard {
	desc := d.Description
	if strings.TrimSpace(desc) == "" {
		desc = "An Agentree agent (" + d.Kind + ")."
	}
	tags := append([]string{d.Kind}, d.Tools...)
	return a2aCard{
		ProtocolVersion: a2aProtocolVersion, Name: d.Name, Description: desc, URL: base,
		PreferredTransport: "JSONRPC", Version: d.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"),
		Capabilities: a2aCapabilities{Streaming: true},
		SecuritySchemes: map[string]a2aSecScheme{a2aKeyScheme: {Type: "http", Scheme: "bearer",
			Description: "An Agentree organization API key (Authorization: Bearer <key>). message/send, message/stream and tasks/cancel need the run role; the card, tasks/get and tasks/resubscribe the read role; answering an approval the approve role."}},
		Security:           []map[string][]string{{a2aKeyScheme: {}}},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2aSkill{{ID: d.Slug, Name: d.Name, Description: desc, Tags: tags}},
	}
}

// a2aBaseURL is the agent's URL as the caller reached it: the card's url
// and the JSON-RPC endpoint.
func a2aBaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/a2a/" + r.PathValue("org") + "/" + r.PathValue("slug")
}
