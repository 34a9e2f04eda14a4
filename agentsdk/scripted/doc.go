// Package scripted is a deterministic model provider that answers from a
// script: text, tool calls, per-call delays and errors. It is labelled
// "scripted" wherever it appears (provider name, model IDs, answers), and
// serves tests, the demo and the benchmark, where no real model is reachable.
//
// Which script turn answers is derived from the request alone (the number of
// assistant messages already in the conversation), so any worker process
// answers a given step the same way.
//
// A provider made by New also reads the environment (env.go): a least delay
// per answer and per token, and a call-log file, so a worker process can be
// slowed, observed and made to hang mid-stream by a fault-injection test.
// It imports agentsdk only.
package scripted
