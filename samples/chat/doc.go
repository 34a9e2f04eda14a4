// Package chat is a multi-turn chat: the built-in react-agent in
// multi-turn mode, woken by each userMessage signal, with a scripted model
// that remembers what it was told. Between messages the execution waits at
// a checkpoint (status WAITING) holding no worker resources; every reply is
// made from the conversation read back from Postgres, never from workflow
// state.
//
// Converse drives a chat through the REST API, as an application would.
// It imports agentsdk, apiclient, the API types and the samples' sampleenv.
package chat
