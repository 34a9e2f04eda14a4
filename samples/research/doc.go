// Package research is a one-shot research agent: the built-in react-agent
// with three tools over a small embedded corpus of notes (search_notes,
// fetch_note, word_count) and a scripted model that plays a believable
// research session, so it runs with no API key. `make run` streams it.
//
// The worker (worker/main.go) runs the agent; the starter (starter/main.go)
// starts an execution and follows its stream. It imports agentsdk only; its
// programs import the adapter.
package research
