package agentreev1

import _ "embed"

// OpenAPI is the OpenAPI 3 document of AgentService, converted at generate
// time from Swagger (internal/openapi3gen), so the gateway serves exactly
// what the proto describes in the version current tools take.
//
//go:embed agentree.openapi.json
var OpenAPI []byte

// Swagger is the same document as protoc-gen-openapiv2 generates it
// (Swagger 2.0), for tools that still want that version.
//
//go:embed agentree.swagger.json
var Swagger []byte
