// Package anthropic is the agentsdk.Provider for Anthropic's Messages API,
// built on the official SDK (github.com/anthropics/anthropic-sdk-go).
//
// It streams answers, turning the API's events into agentsdk stream events
// and one provider-agnostic assistant message; converts agentsdk messages
// to the API's wire format (tool results grouped into one user message,
// tool-call IDs normalised so a conversation started with another provider
// still pairs, this provider's own thinking sent back with its signature
// and other providers' thinking dropped); prices usage; and classifies
// failures as *agentsdk.ModelError. The SDK never retries: Temporal does.
//
// anthropic imports only agentsdk (with its internal providerkit, the
// plumbing it shares with the other providers) and the Anthropic SDK.
package anthropic
