// Package mcp offers the tools of MCP (Model Context Protocol) servers as
// agentsdk tools, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Connect starts (stdio) or reaches (streamable HTTP) each configured
// server, lists its tools once and returns them as agentsdk tools named
// <server>__<tool>, with the server's input schema. The separator is "__",
// not ".", because Anthropic's and OpenAI's APIs accept only tool names
// matching ^[a-zA-Z0-9_-]{1,64}$; a tool name with other characters has
// them replaced by '_', and a name past 64 characters is cut and given a
// short hash of the whole, so every offered name is one every provider
// takes and stays the same across restarts.
//
// A call's text contents, joined by newlines, are the tool's output; an
// isError result, a protocol error and a call that outlives its server's
// timeout become error results the model reads. A server that dies (its
// process exits, its HTTP session is lost) is reconnected in the
// background with a doubling backoff; calls made meanwhile fail at once
// saying the server is restarting. A server's
// notifications/tools/list_changed is followed by a new listing: Tools
// then returns the new list (Options.OnToolsChanged says when), and a
// tool no longer listed is refused. A restarted server whose tools
// changed without saying so is logged, and a call to a tool it no longer
// has gets the server's own error.
//
// A server serves the organizations Server.Orgs names (all, when nil):
// its tools carry them in agentsdk.Tool.Orgs, and a call from another is
// refused. An organization given credentials of its own (Access) has a
// session, and for a command a process, of its own; the others share
// one. Each tools/call carries the calling organization's ID in its
// _meta, as "agentree/org". A tool's default policy is auto when the
// server annotates it readOnlyHint (and not destructiveHint), else ask:
// it acts with the operator's credentials.
//
// A stdio server runs in its own process group with only a few of the
// worker's variables (PATH, HOME, LANG, TMPDIR, TZ) plus the ones its
// configuration gives: model keys and database URLs are never passed on.
// Close ends every session and kills what is left of each process group.
//
// It imports agentsdk and the MCP SDK; never Temporal or Postgres.
package mcp
