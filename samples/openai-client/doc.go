// Package openaiclient shows that an OpenAI-SDK program is an Agentree
// client: the official openai-go SDK, given Agentree's /v1 as its base
// URL and an Agentree API key, streams a response from the built-in
// react-agent (here on a scripted model). Each response is a durable
// turn: a worker killed mid-answer costs the client nothing but a pause
// (the sample's test kills one).
//
// Stream is the client side, as such a program writes it, on the
// openai-go SDK alone; Script is the worker's scripted model (agentsdk).
// The package imports those SDKs only, never pgx or entrystore.
package openaiclient
