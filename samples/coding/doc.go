// Package coding is a coding agent whose file tools (list_files,
// read_file, write_file, edit_file) are confined to a sandbox directory:
// each execution works in its own workspace under it, and a path that
// would leave the workspace (`..`, an absolute path, a symlink pointing
// out) is refused with an error the model reads and can correct.
//
// It imports agentsdk only; its worker imports the adapter, its starter adapter/client.
package coding
