//go:build !unix

package mcp

import "os/exec"

func ownGroup(*exec.Cmd) {}

// killGroup kills proc itself: without process groups, its children are
// left to end when their input closes.
func killGroup(proc *exec.Cmd) {
	if proc != nil && proc.Process != nil {
		_ = proc.Process.Kill()
	}
}
