// Package ui is the web UI the gateway serves at /: a page that lists
// executions, shows one's transcript live (answers as sanitized Markdown),
// steers it (follow-ups, cancel, tool approvals, resume), debugs it (the
// conversation tree with time travel, the token chart, sub-agents, and
// debug.js's run analysis: decision points, compression analysis, the
// explanation) and
// manages definitions. Its assets are embedded in the binary and it talks
// to the same REST API as any other client — no endpoint exists for it
// alone but the one its Content-Security-Policy reports violations to,
// which logs them. It loads nothing from another host. The API key a
// person signs in with stays in the tab's sessionStorage.
//
// It imports the standard library and golang.org/x/time/rate only.
package ui
