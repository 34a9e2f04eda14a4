package agentreev1

import _ "embed"

// OpenAPI is the OpenAPI (Swagger 2.0) document of AgentService, as
// generated, so the gateway serves exactly what the proto describes.
//
//go:embed agentree.swagger.json
var OpenAPI []byte
