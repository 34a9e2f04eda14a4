// Package openai is the agentsdk.Provider for the OpenAI Chat Completions
// API, built on the official SDK (github.com/openai/openai-go/v3). The same
// provider serves OpenAI-compatible servers — Ollama, vLLM, llama.cpp — by
// BaseURL, as a named endpoint of their own (Options.Endpoint).
//
// It streams answers, turning chunks into agentsdk stream events and one
// provider-agnostic assistant message; converts agentsdk messages to the
// API's wire format (system prompt first, one tool message per call,
// tool-call IDs normalised to the API's length limit, thinking dropped
// since the API takes none back); prices usage; and classifies failures as
// *agentsdk.ModelError. The SDK never retries: Temporal does.
//
// openai imports only agentsdk (with its internal providerkit, the
// plumbing it shares with the other providers) and the OpenAI SDK.
package openai
