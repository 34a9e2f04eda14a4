// Package ui is the web UI the gateway serves at /: a page that lists
// executions, shows one's transcript live, steers it (follow-ups, cancel,
// tool approvals), shows the debugger's run analysis in side panels
// (debug.js: decision points, compression analysis, the explanation) and
// manages definitions. Its assets are embedded in the
// binary and it talks to the same REST API as any other client — no
// endpoint exists for it alone, and it loads nothing from another host.
// The API key a person signs in with stays in the tab's sessionStorage.
package ui
