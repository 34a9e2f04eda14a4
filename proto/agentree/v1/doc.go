// Package agentreev1 is Agentree's public API, generated from
// agentree.proto: the AgentService messages and gRPC stubs
// (protoc-gen-go, protoc-gen-go-grpc), its REST mapping (protoc-gen-grpc-gateway,
// from agentree_http.yaml) and the OpenAPI document (protoc-gen-openapiv2),
// which OpenAPI embeds, and the access declaration of every RPC
// (access.proto: the role it needs, how it honours Idempotency-Key), which
// the gateway reads with HTTPRules. Regenerate with `make generate`; CI fails on a diff.
//
// It imports only protobuf, gRPC and grpc-gateway runtime packages.
package agentreev1
