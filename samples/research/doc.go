// Package research is a one-shot research agent: the built-in react-agent
// with the demo tool set (agentsdk/tools/demo: search_notes, fetch_note,
// word_count over a small embedded corpus of notes) and the demo's
// scripted model, which plays a believable research session, so it runs
// with no API key. `make run` streams the same agent from `agentree dev`.
//
// The worker (worker/main.go) runs the agent; the starter (starter/main.go)
// starts an execution and follows its stream through the REST API the
// worker serves. It imports agentsdk only; its worker imports the adapter,
// its starter the REST client (apiclient, through sampleenv).
package research
