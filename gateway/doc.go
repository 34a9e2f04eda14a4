// Package gateway is how users and UIs drive agents: the AgentService of
// proto/agentree/v1 implemented over the entrystore and the adapter's
// execution client, served as gRPC and, through grpc-gateway, as JSON REST
// under /api/orgs/{org}/, plus Server-Sent Events streams, /healthz and the
// OpenAPI document. Requests authenticate with an organization's API key
// (Authorization: Bearer …).
//
// Live events come from the agent_stream_event table: a stream replays what
// the client missed (Last-Event-ID), then follows new rows, woken by one
// Postgres LISTEN connection per gateway process, so worker and gateway can
// run apart with nothing but Postgres between them.
//
// It may import entrystore, the generated proto package, the adapter (for
// its execution Client and event names), agentsdk (the execution config and
// message types the adapter takes) and the Temporal client.
package gateway
