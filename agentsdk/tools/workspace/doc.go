// Package workspace gives each execution its own directory on the worker,
// Root/<execution ID>, and confines file access to it. A path that would
// leave the workspace (`..`, an absolute path, a symlink pointing out,
// including one a command created) is refused with ErrOutside and a reason
// the model can read; every operation then goes through an os.Root, which
// the kernel confines to the directory, so a symlink swapped in between
// the check and the operation still cannot lead out.
//
// Workspaces are private to the worker's user (0700, files 0600), may have
// a disk quota (CheckQuota), and are removed when their execution ends
// (Remove) or after they have not been used for a while (Sweep).
//
// A workspace's files at one moment are a Manifest (Snapshot): path →
// type, mode, size and sha256, links stored as links and never followed.
// The runtime keeps the bytes by sha256 and restores a manifest into a
// workspace (Restore), refusing any path that would lead out of it.
//
// It imports the standard library only.
package workspace
