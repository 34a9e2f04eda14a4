// Package a2a is the A2A sample: two Agentree deployments, each a worker
// and its gateway on a task queue of its own. The specialist's exposes an
// agent definition over A2A; the lead's worker has that agent as a remote
// agent (its A2A URL and an API key of the specialist's organization, from
// the environment), and its lead agent delegates a question to it with
// spawn_agents. See README.md.
//
// It imports agentsdk (react, scripted), apiclient, the API's proto and
// the samples' sampleenv: the starter links it, so never the worker's
// code, pgx or entrystore.
package a2a
