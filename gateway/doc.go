// Package gateway is how users and UIs drive agents: the AgentService of
// proto/agentree/v1 implemented over the entrystore and the adapter's
// execution client, served as gRPC and, through grpc-gateway, as JSON REST
// under /api/orgs/{org}/, plus Server-Sent Events streams, /healthz and the
// OpenAPI document. Requests authenticate with an organization's API key
// (Authorization: Bearer …), whose roles are checked against the access
// declaration each RPC carries in the proto (routes.go reads them with the
// HTTP rules; access.go enforces them for REST and gRPC; idempotency.go
// honours Idempotency-Key on the routes they declare mutating).
//
// Live events come from the agent_stream_event table: a stream replays what
// the client missed (Last-Event-ID), then follows new rows, woken by one
// Postgres LISTEN connection per gateway process, so worker and gateway can
// run apart with nothing but Postgres between them.
//
// What an execution may use comes from the workers too: each records its
// agent kinds, tools and model endpoints in worker_capability, and a create
// naming anything no live worker on the gateway's task queue serves is a
// 400 listing what they do serve (a queue with no live worker at all, a
// 503). GET /api/orgs/{org}/capabilities lists them.
//
// /v1/responses and /v1/conversations (responses*.go) serve the OpenAI
// Responses and Conversations APIs as a projection of executions: a
// conversation is an execution's tree, a response one turn of it, named by
// the entry the turn starts at. They authenticate as the native routes do
// and call the same service methods (create, signal, fork, decide,
// cancel), so roles, limits and durability are the native API's. The
// AG-UI stream of an execution (agui*.go) maps the same stored events to
// AG-UI 1.0 events; an agent definition takes AG-UI's RunAgentInput.
// A definition that opts in (expose.a2a) is an A2A 0.3.0 agent under
// /a2a/{org}/{slug} (a2a*.go): its card, and JSON-RPC methods mapped onto
// the same service methods and stored stream, a task being an execution.
// A definition that opts in (expose.mcp) is a tool run_{slug} of the
// organization's MCP endpoint POST /mcp/{org} (mcpserve*.go: the SDK's
// stateless streamable HTTP handler, the tools built per request for the
// authenticated caller, a call started and followed through the same
// service methods and stored stream as an A2A task).
//
// The debugger's run analysis (seed 004) is built from the same reads:
// an execution's decision points (decisions.go), what a compaction may
// have lost (compression.go, its terms in terms.go) and the explanation
// of a run (explain.go), whose replay the gateway builds (replay.go) and
// whose one model call a worker makes, in adapter/client's explain
// workflow.
//
// An execution in persistenceMode local keeps its conversation on the
// worker that took it; the read endpoints ask that worker, through
// adapter/client's HeldReader (a Temporal query), and answer as for any
// execution (conversation.go).
//
// It may import entrystore, the generated proto package, adapter/client (the
// execution client), agentsdk and agentsdk/event (the execution config,
// message types and stream event names), internal/step (a stored entry as
// the SDK sees it, and the model step's record of a call and the request
// it sent, which the context and timeline endpoints read back) and the
// Temporal client; never the worker's
// package, adapter, nor the engine (internal/layout checks it).
package gateway
