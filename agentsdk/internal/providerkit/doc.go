// Package providerkit is the shared plumbing of the provider packages
// (agentsdk/anthropic, agentsdk/openai): what every provider does the same
// way whatever its wire format — normalising tool-call IDs, repairing
// streamed tool arguments, encoding inline images, classifying failures and
// reading Retry-After, draining a stream, pricing usage from a table,
// checking base URLs and naming a missing key.
//
// It is internal so that none of this becomes API; a provider keeps its own
// wire conversion and stream accumulation. It imports agentsdk only.
package providerkit
