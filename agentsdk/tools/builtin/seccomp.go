package builtin

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// The jail's second layer: a seccomp filter bwrap installs on the
// command (--seccomp) after it has built the namespaces, so it binds
// every process of the call and none of bwrap's own set-up. Everything
// is allowed but the system calls below, which a shell, a compiler or a
// test run never needs and which are how a process escapes or attacks a
// namespace jail: each of them has been the way in to a kernel bug that
// turned an unprivileged user namespace into root on the host. They fail
// with EPERM, as the kernel would answer an unprivileged caller, so a
// program that probes for them degrades instead of crashing.
var deniedSyscalls = [][]string{
	// File system namespaces: no remounting the read-only root, no
	// escaping the jail's root by a new one; the new mount API too.
	{"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
		"open_tree", "mount_setattr"},
	// New namespaces: a nested user namespace gives back every capability
	// bwrap dropped (clone's flags are checked below; clone3's are in
	// memory a filter cannot read).
	{"unshare", "setns"},
	// Reading or writing another process's memory.
	{"ptrace", "process_vm_readv", "process_vm_writev"},
	// Programs and interfaces into the kernel itself: eBPF, perf
	// counters (side channels), userfaultfd (races that widen kernel
	// bugs), io_uring (a second system call interface seccomp cannot
	// see into).
	{"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register"},
	// The kernel keyring is not namespaced: keys of the worker's user.
	{"keyctl", "add_key", "request_key"},
	// Replacing or extending the kernel, stopping the machine.
	{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot"},
	// Host-wide state: swap, process accounting, quotas, the kernel log,
	// file system notifications on whole mounts.
	{"swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "fanotify_init"},
	// Opening a file by its handle skips the path walk, and with it the
	// jail's mounts (the "shocker" escape from containers).
	{"open_by_handle_at", "name_to_handle_at"},
}

// deniedSyscallsByArch are denied where the architecture has them: x86's
// raw I/O port access.
var deniedSyscallsByArch = map[string][]string{"amd64": {"iopl", "ioperm"}}

// namespaceFlags are clone's flags that create namespaces: clone with any
// of them fails, plain fork and threads do not.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
	syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// allowedPersonalities are personality(2)'s arguments a program may pass:
// the query (0xffffffff), Linux, 32-bit Linux and the 2.6 uname that old
// builds ask for. The others turn off address-space randomisation
// (ADDR_NO_RANDOMIZE) or make data executable (READ_IMPLIES_EXEC).
var allowedPersonalities = []uint64{0xffffffff, 0, 0x0008, 0x20000}

// seccompPolicy is the filter's policy with the names of goarch.
func seccompPolicy(goarch string) seccomp.Policy {
	var denied []string
	for _, group := range deniedSyscalls {
		denied = append(denied, group...)
	}
	denied = append(denied, deniedSyscallsByArch[goarch]...)
	// BitsSet matches when any of the bits is set; clone's flags are its
	// first argument on every architecture Go runs on.
	byArgs := []seccomp.NameWithConditions{{Name: "clone",
		Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}}}
	// The conditions of one entry must all hold: none of the allowed.
	var personality seccomp.ArgumentConditions
	for _, p := range allowedPersonalities {
		personality = append(personality, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: p})
	}
	byArgs = append(byArgs, seccomp.NameWithConditions{Name: "personality", Conditions: personality})
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Names: denied, NamesWithCondtions: byArgs, Action: seccomp.ActionErrno},
		// ENOSYS, not EPERM: the C library then falls back to clone, whose
		// flags the filter can read; EPERM would fail every thread and
		// posix_spawn.
		{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS)},
	}}
}

// seccompProgram assembles the filter for the worker's architecture into
// what bwrap reads from --seccomp's descriptor: struct sock_filter's, 8
// bytes each, in the machine's byte order. An architecture the library
// has no system call table for is an error, and bash is not offered.
func seccompProgram() ([]byte, error) {
	native, err := arch.GetInfo(runtime.GOARCH)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	policy := seccompPolicy(runtime.GOARCH)
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	// The library lets a foreign architecture's calls through to the
	// default action, here allow: a 64-bit process can still make i386
	// system calls (int 0x80), whose numbers differ and would slip past
	// every rule. Those kill the process before anything else.
	prog = append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
	}, prog...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
}

// seccompFile is a descriptor bwrap reads the filter from: the read end of
// a pipe holding it whole (a few hundred bytes, far under a pipe's
// buffer). bwrap reads to the end, so each run needs its own.
func seccompFile(program []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: pipe: %w", err)
	}
	_, err = w.Write(program)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("seccomp filter: pipe: %w", err)
	}
	return r, nil
}
