// Package subagents is the sub-agents sample: a lead agent splits a
// research question across three sub-agents with spawn_agents, each a
// child execution with its own conversation and step budget, and writes
// the answer from theirs. See README.md.
package subagents
