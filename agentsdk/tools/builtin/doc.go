// Package builtin is the product's tool set for agents that work on files
// and run commands: read_file (line ranges, numbered), write_file,
// edit_file (one exact match), list_files (globs with **), grep (Go regular
// expressions) and bash. Each execution works in its own workspace
// (agentsdk/tools/workspace): the file tools go through an os.Root confined
// to it and check a file's size before reading it, and bash runs there in a
// bwrap jail that holds only the workspace and the system's programs
// (isolation.go), behind a seccomp filter that refuses the system calls of
// jail escapes (seccomp.go), under rlimits and a pids cgroup (limits.go)
// and the workspace's disk quota, in its own process group, with a timeout
// that kills the whole group, an environment built from an allow-list, a
// deny list checked first, and its output streamed live as terminal events
// and capped in memory (past the cap the whole output goes to a file of the
// workspace instead). Bash fails closed: where the jail cannot run, it is
// not offered; only an explicit isolation none runs commands on the host.
//
// A worker enables it by configuration (the "builtin" tool set, off by
// default: bash runs commands on the worker). It imports agentsdk,
// agentsdk/event and agentsdk/tools/workspace only (and the standard
// library, and go-seccomp-bpf with x/net/bpf to assemble the filter).
package builtin
