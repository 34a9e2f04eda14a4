// Package mcptest is a small MCP server for tests, made with the official
// Go SDK: the same code serves over stdio (as the program in ./server,
// built by Build) and in process over streamable HTTP (NewServer with an
// httptest server).
//
// Its tools: add (a sum), fail (an isError result), pieces (two text
// contents), slow (answers after a delay, or when cancelled), env (a
// variable of the server's own environment), pid (its process ID), whoami
// (its $MCPTEST_TOKEN and the calling organization from the request's
// _meta), grow (adds the tool grown, so the server announces that its
// list changed) and, over stdio only, crash (the process exits without
// answering). add, fail, env, pid, whoami and grown say they only read;
// slow says nothing; grow
// that it is destructive.
//
// It imports the MCP SDK and the standard library; only tests use it.
package mcptest
