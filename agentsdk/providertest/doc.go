// Package providertest holds fake model servers for testing model
// providers: an httptest server that answers with scripted replies and
// records every request body, and builders that write the Anthropic
// Messages and OpenAI Chat Completions streaming wire protocols exactly as
// the real APIs send them. Tests drive the official SDK clients at it
// through their base URL, so what is asserted is the real wire format.
//
// providertest imports agentsdk, the standard library and testify; its own
// tests also import the providers it checks together.
package providertest
