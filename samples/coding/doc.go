// Package coding is a coding agent using the product's built-in file tools
// (agentsdk/tools/builtin: list_files, read_file, grep, write_file,
// edit_file), confined to a sandbox directory: each execution works in its
// own workspace under it, and a path that would leave the workspace (`..`,
// an absolute path, a symlink pointing out) is refused with an error the
// model reads and can correct.
//
// It imports agentsdk and its tools, apiclient and the API types (to
// decide approvals over REST); its worker imports the adapter.
package coding
