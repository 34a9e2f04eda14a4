// Command syscalls makes, directly, the system calls the bash jail's
// seccomp filter refuses and a few it allows, with arguments that fail
// harmlessly (or do nothing) where the call is allowed, and prints one
// line per call: its name, "=", and "ok" or the errno's name. The
// builtin package's tests run it in the jail, with and without the
// filter.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	missing := []byte("/nonexistent-agentree\x00")
	path := uintptr(unsafe.Pointer(&missing[0]))
	calls := []struct {
		name string
		nr   uintptr
		args [6]uintptr
	}{
		{"getpid", unix.SYS_GETPID, [6]uintptr{}},
		{"personality-query", unix.SYS_PERSONALITY, [6]uintptr{0xffffffff}},
		{"personality-no-aslr", unix.SYS_PERSONALITY, [6]uintptr{addrNoRandomize}},
		{"unshare", unix.SYS_UNSHARE, [6]uintptr{unix.CLONE_NEWUSER}},
		{"setns", unix.SYS_SETNS, [6]uintptr{^uintptr(0), unix.CLONE_NEWNET}},
		{"clone3", unix.SYS_CLONE3, [6]uintptr{}},
		{"mount", unix.SYS_MOUNT, [6]uintptr{path, path, path}},
		{"chroot", unix.SYS_CHROOT, [6]uintptr{path}},
		{"ptrace", unix.SYS_PTRACE, [6]uintptr{unix.PTRACE_PEEKDATA, uintptr(os.Getppid())}},
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{uintptr(os.Getpid())}},
		{"keyctl", unix.SYS_KEYCTL, [6]uintptr{unix.KEYCTL_GET_KEYRING_ID, ^uintptr(2)}},
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{0, 0, ^uintptr(0), ^uintptr(0)}},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{1, 0}},
		{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, [6]uintptr{^uintptr(99), path}},
		{"bpf", unix.SYS_BPF, [6]uintptr{unix.BPF_PROG_LOAD}},
		{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{}},
	}
	for _, c := range calls {
		_, _, errno := unix.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
		report(c.name, errno)
	}
	// Go's fork and exec: plain, then into a new user namespace (clone
	// with CLONE_NEWUSER).
	report("fork", exitErrno(exec.Command("/bin/true").Run()))
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	report("clone-newuser", exitErrno(cmd.Run()))
}

func exitErrno(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if err != nil {
		return syscall.EIO
	}
	return 0
}

func report(name string, errno syscall.Errno) {
	result := "ok"
	if errno != 0 {
		result = unix.ErrnoName(errno)
	}
	fmt.Printf("%s=%s\n", name, result)
}

// addrNoRandomize is personality(2)'s ADDR_NO_RANDOMIZE.
const addrNoRandomize = 0x0040000
