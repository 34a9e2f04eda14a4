package builtin

import (
	"context"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// TestIsolationSeccompInTheJail builds a program that makes the denied
// system calls itself (testdata/syscalls) into a workspace and runs it in
// the jail twice: with the filter every one of them fails with EPERM
// (clone3 with ENOSYS, so the C library falls back to clone) while
// ordinary calls, fork and exec work; in the same jail without the filter
// the same calls get the kernel's own answers, so the filter is what
// refuses them.
func TestIsolationSeccompInTheJail(t *testing.T) {
	ws := workspace.Workspaces{Root: t.TempDir()}
	b, unavailable, err := newBash(ws, BashOptions{Env: []string{"PATH"}})
	require.NoError(t, err)
	require.NoError(t, unavailable, "this host runs bwrap with user namespaces (make up installs it)")
	w, err := ws.Open("e")
	require.NoError(t, err)
	defer w.Close()
	build := exec.Command("go", "build", "-o", filepath.Join(w.Dir(), "syscalls"), "./testdata/syscalls")
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	run := func(b *bash) map[string]string {
		res, err := b.exec(context.Background(), w, "./syscalls", DefaultBashTimeout, nil, nil)
		require.NoError(t, err)
		require.Equal(t, 0, res.exit, res.output)
		got := map[string]string{}
		for line := range strings.Lines(res.output) {
			name, result, ok := strings.Cut(strings.TrimSpace(line), "=")
			require.True(t, ok, res.output)
			got[name] = result
		}
		return got
	}

	filtered := run(b)
	for _, name := range []string{"getpid", "personality-query", "fork"} {
		require.Equal(t, "ok", filtered[name], "%s is allowed: %v", name, filtered)
	}
	denied := []string{"personality-no-aslr", "unshare", "setns", "mount", "chroot", "ptrace", "process_vm_readv",
		"keyctl", "perf_event_open", "io_uring_setup", "name_to_handle_at", "bpf", "userfaultfd", "clone-newuser"}
	for _, name := range denied {
		require.Equal(t, "EPERM", filtered[name], "%s is denied: %v", name, filtered)
	}
	require.Equal(t, "ENOSYS", filtered["clone3"], "%v", filtered)

	// The same jail without --seccomp: the kernel's answers.
	n := len(b.jail.fixed)
	require.Equal(t, []string{"--seccomp", "3"}, b.jail.fixed[n-2:], "the filter is the last of the jail's fixed arguments")
	bare, open := *b, *b.jail
	open.fixed = open.fixed[:n-2]
	bare.jail = &open
	unfiltered := run(&bare)
	require.Equal(t, "ok", unfiltered["personality-no-aslr"], "%v", unfiltered)
	for _, name := range []string{"unshare", "setns", "mount", "chroot", "ptrace", "process_vm_readv", "keyctl",
		"perf_event_open", "io_uring_setup", "name_to_handle_at", "clone3"} {
		require.NotContains(t, []string{"EPERM", "ENOSYS"}, unfiltered[name], "without the filter %s gets the kernel's answer: %v", name, unfiltered)
	}
}

// TestIsolationSeccompProgram runs the assembled program in a BPF interpreter on
// hand-made seccomp_data: a foreign architecture's call (i386 on amd64)
// kills the process, x32's are refused, the denied calls get EPERM, clone
// is refused only with namespace flags, personality only for other
// arguments than the harmless ones.
func TestIsolationSeccompProgram(t *testing.T) {
	program, err := seccompProgram()
	require.NoError(t, err)
	require.Zero(t, len(program)%8)
	var raw []bpf.RawInstruction
	for i := 0; i < len(program); i += 8 {
		raw = append(raw, bpf.RawInstruction{Op: binary.NativeEndian.Uint16(program[i:]), Jt: program[i+2], Jf: program[i+3],
			K: binary.NativeEndian.Uint32(program[i+4:])})
	}
	insns, ok := bpf.Disassemble(raw)
	require.True(t, ok)
	vm, err := bpf.NewVM(insns)
	require.NoError(t, err)
	native, err := arch.GetInfo(runtime.GOARCH)
	require.NoError(t, err)

	// seccomp_data as the interpreter reads it: its loads are big-endian
	// where the kernel's are native, so each 32-bit word is stored
	// big-endian, at the offset it has in the (little-endian) struct.
	verdict := func(a arch.AuditArch, nr int, args ...uint64) uint32 {
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[0:], uint32(nr))
		binary.BigEndian.PutUint32(data[4:], uint32(a))
		for i, v := range args {
			binary.BigEndian.PutUint32(data[16+8*i:], uint32(v))
			binary.BigEndian.PutUint32(data[16+8*i+4:], uint32(v>>32))
		}
		v, err := vm.Run(data)
		require.NoError(t, err)
		return uint32(v)
	}
	nr := func(name string) int {
		n, ok := native.SyscallNames[name]
		require.True(t, ok, name)
		return n
	}
	allow, eperm := uint32(seccomp.ActionAllow), uint32(seccomp.ActionErrno)|uint32(syscall.EPERM)
	enosys := uint32(seccomp.ActionErrno) | uint32(syscall.ENOSYS)

	require.Equal(t, allow, verdict(native.ID, nr("getpid")))
	require.Equal(t, allow, verdict(native.ID, nr("read"), 0, 0, 1<<40))
	for _, group := range deniedSyscalls {
		for _, name := range group {
			require.Equal(t, eperm, verdict(native.ID, nr(name)), name)
		}
	}
	for _, name := range deniedSyscallsByArch[runtime.GOARCH] {
		require.Equal(t, eperm, verdict(native.ID, nr(name)), name)
	}
	require.Equal(t, enosys, verdict(native.ID, nr("clone3")))
	require.Equal(t, allow, verdict(native.ID, nr("clone"), uint64(syscall.SIGCHLD)), "fork")
	require.Equal(t, allow, verdict(native.ID, nr("clone"), syscall.CLONE_VM|syscall.CLONE_THREAD|syscall.CLONE_SIGHAND), "a thread")
	for _, flag := range []uint64{syscall.CLONE_NEWUSER, syscall.CLONE_NEWNS, syscall.CLONE_NEWPID, syscall.CLONE_NEWNET} {
		require.Equal(t, eperm, verdict(native.ID, nr("clone"), flag|uint64(syscall.SIGCHLD)), "clone %#x", flag)
	}
	for _, p := range allowedPersonalities {
		require.Equal(t, allow, verdict(native.ID, nr("personality"), p), "personality %#x", p)
	}
	require.Equal(t, eperm, verdict(native.ID, nr("personality"), 0x0040000), "ADDR_NO_RANDOMIZE")
	require.Equal(t, eperm, verdict(native.ID, nr("personality"), 1<<32), "the upper half counts")

	foreign := arch.I386.ID
	if native.ID == arch.I386.ID {
		foreign = arch.X86_64.ID
	}
	require.Equal(t, uint32(seccomp.ActionKillProcess), verdict(foreign, 20), "a foreign architecture's getpid")
	if runtime.GOARCH == "amd64" {
		require.Equal(t, enosys, verdict(native.ID, arch.X32.SeccompMask|arch.X32.SyscallNames["getpid"]), "x32")
	}
}

// TestIsolationSeccompNamesExist: every name the policy denies is a system
// call of each architecture the worker is built for, so the filter
// assembles there too (an unknown name would leave bash unoffered).
func TestIsolationSeccompNamesExist(t *testing.T) {
	for goarch, info := range map[string]*arch.Info{"amd64": arch.X86_64, "arm64": arch.AARCH64} {
		policy := seccompPolicy(goarch)
		var names []string
		for _, g := range policy.Syscalls {
			names = append(names, g.Names...)
			for _, c := range g.NamesWithCondtions {
				names = append(names, c.Name)
			}
		}
		require.Contains(t, names, "unshare")
		for _, name := range names {
			_, ok := info.SyscallNames[name]
			require.True(t, ok, "%s has %s", goarch, name)
		}
	}
}
