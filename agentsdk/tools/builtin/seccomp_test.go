package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// TestBashSeccomp: through the tool, as a model would, the system's own
// programs cannot make a user namespace (unshare -U, which in the jail
// without the filter succeeds), turn off address randomisation (setarch
// -R) or chroot, while ordinary work — pipes, subshells, background jobs
// — goes on; the result names the filter.
func TestBashSeccomp(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: `exec 2>&1; unshare -U true; echo "unshare $?"; ` +
		`setarch -R true; echo "setarch $?"; chroot / true; echo "chroot $?"; ` +
		`(echo sub; sleep 0 & wait) | tr a-z A-Z; seq 3 | wc -l`})
	require.NoError(t, err)
	require.Contains(t, out, "unshare: unshare failed: Operation not permitted\nunshare 1\n")
	require.Contains(t, out, "Operation not permitted\nsetarch 1\n")
	require.Contains(t, out, "chroot: cannot change root directory to '/': Operation not permitted\nchroot 125\n")
	require.Contains(t, out, "SUB\n3\n[exit status 0; isolation: "+jailed+"]")
	require.Contains(t, jailed, "seccomp filter")
}
