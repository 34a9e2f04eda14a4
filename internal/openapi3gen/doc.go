// Command openapi3gen converts the Swagger 2.0 document protoc-gen-openapiv2
// writes into the OpenAPI 3 document the gateway serves at /openapi.json, so
// current client generators and API tools take it. In both documents it
// declares 64-bit integers as numbers (type integer), which is how the
// gateway writes them. scripts/gen.sh (make generate) runs it; its output
// is checked in beside the Swagger document.
//
// Usage: go run ./internal/openapi3gen IN.swagger.json OUT.openapi.json
//
// It states ExecutionConfig's ranges and choices from agentsdk (config.go),
// the one place they are declared. It imports kin-openapi, agentsdk and the
// standard library.
package main
