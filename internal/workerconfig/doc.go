// Package workerconfig is the configuration file of `agentree worker` and
// `agentree dev`: which task queue and namespace the worker serves, its
// named model endpoints (provider, base URL, the environment variable
// holding the key, allowed models, prices), the built-in tool sets it
// enables, the agents it runs and the workspace of the builtin tools
// (root directory, quota, read limit, how long an unused one is kept,
// bash's timeouts, output limit, environment allow-list, isolation, limits
// and deny list), and the cap on one organization's tool calls at once. It loads and validates the file
// (YAML, strict: an unknown field is an error naming it) and builds the
// agents, providers and tools the adapter's plugin takes.
//
// Endpoints are the trust boundary of model calls: URLs and keys come
// from here, on the worker, and nowhere else. A request only picks an
// endpoint by name (agentsdk.ModelRef.Endpoint). They are the money
// boundary too: an endpoint lists the models it serves ("*" only when
// written), and serves only those with a price or marked unpriced
// (agentsdk.EndpointInfo.Priced).
//
// agentree.example.yaml at the repository root documents every field.
// With no file, Default applies: the demo endpoint and tool set, plus
// Anthropic's and OpenAI's default endpoints when their keys are set.
//
// The mcp section lists MCP servers (a command over stdio, or a
// streamable HTTP URL) whose tools the worker offers as <server>__<tool>:
// like endpoints, they are worker configuration that no request can
// change, and their secrets come from the worker's environment or files,
// named. Each names the organizations it serves, by slug, each with its
// own credentials or the server's (BuildFor resolves slugs to IDs).
//
// It imports agentsdk and its providers, agents and tool sets; never
// Temporal, Postgres or samples.
package workerconfig
