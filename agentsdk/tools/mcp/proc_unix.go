//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that what it
// starts (npx starts node, a shell script its commands) can be killed
// with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of proc's process group.
func killGroup(proc *exec.Cmd) {
	if proc == nil || proc.Process == nil {
		return
	}
	_ = syscall.Kill(-proc.Process.Pid, syscall.SIGKILL)
}
