// Package demo is the research demo `make run` shows, as a product tool
// set and model: three tools over a small embedded corpus of notes about
// Agentree (search_notes, fetch_note, word_count) and a scripted model
// (scripted/scripted-1) that plays a believable research session with
// them, so the demo runs with no API key.
//
// A worker enables it by configuration (the "demo" tool set and a
// "scripted" endpoint, both on by default in `agentree worker` and
// `agentree dev`); samples/research runs the same agent from its own
// worker. It imports agentsdk and agentsdk/scripted only.
package demo
