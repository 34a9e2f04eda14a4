package layout_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// workerPackage is the Temporal plugin and its workflows.
const workerPackage = "github.com/agentree/agentree/adapter"

// clientPackages are what a client links: none may reach workerPackage.
var clientPackages = []string{"./gateway", "./adapter/client", "./samples/.../starter", "./samples/internal/sampleenv"}

func TestClientsDoNotImportTheWorkerPackage(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	for _, pkg := range clientPackages {
		cmd := exec.Command("go", append([]string{"list", "-deps"}, pkg)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", pkg, out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "github.com/agentree/agentree/agentsdk", "go list -deps %s listed no dependencies", pkg)
		require.NotContains(t, deps, workerPackage, "%s reaches the worker package; use adapter/client", pkg)
	}
}

// TestWorkerPackageIsSeen keeps the check honest: a worker main does reach
// the worker package, so the search above would find it if it were there.
func TestWorkerPackageIsSeen(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./samples/chat/worker")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, strings.Fields(string(out)), workerPackage)
}

// TestAPIClientLinksOnlyTheAPITypes: the REST client is what programs that
// are not workers import, so of this module it links the generated API
// types alone: no store, no pgx, no Temporal, no runtime.
func TestAPIClientLinksOnlyTheAPITypes(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./apiclient")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "google.golang.org/protobuf/proto", "go list -deps listed the dependencies")
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/agentree/agentree/") {
			require.Contains(t, []string{"github.com/agentree/agentree/apiclient", "github.com/agentree/agentree/proto/agentree/v1"}, d, "apiclient links %s", d)
		}
		require.False(t, strings.HasPrefix(d, "github.com/jackc/") || strings.HasPrefix(d, "go.temporal.io/"), "apiclient links %s", d)
	}
}
