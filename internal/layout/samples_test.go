package layout_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The store's packages, which samples never use: they talk to Agentree
// through the REST client (apiclient) and write agents with the SDK.
var storePackage = func(p string) bool {
	return p == module+"entrystore" || p == "github.com/jackc/pgx/v5" || strings.HasPrefix(p, "github.com/jackc/pgx/v5/")
}

// TestSamplesUseNeitherPgxNorTheStore: no sample imports pgx or
// entrystore, and a starter (with sampleenv, all a starter links of the
// samples' helpers) does not link them at all. A worker links them
// through the plugin, which keeps the conversation in Postgres; it opens
// the store with adapter.OpenStore and never names it.
func TestSamplesUseNeitherPgxNorTheStore(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", "./samples/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./samples/...")
	samples := 0
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), "|")
		samples++
		for _, imp := range strings.Split(imports, ",") {
			require.False(t, storePackage(imp), "%s imports %s: use apiclient (starters) or adapter.OpenStore (workers)", pkg, imp)
		}
	}
	require.Greater(t, samples, 10, "go list ./samples/... listed the samples")

	g := load(t, "./samples/.../starter", "./samples/internal/sampleenv")
	require.Contains(t, g.roots, module+"samples/research/starter")
	require.Empty(t, g.violations(all, storePackage), "a starter links pgx or the store")
	require.Empty(t, g.violations(all, is(module+"adapter", module+"internal/engine")), "a starter links the worker's code")
}

// TestStoreCheckSeesAWorker keeps the test above honest: a sample's
// worker does link the store, through the plugin, and the same check
// names the chain.
func TestStoreCheckSeesAWorker(t *testing.T) {
	g := load(t, "./samples/research/worker")
	v := g.violations(all, storePackage)
	require.Len(t, v, 1)
	require.Contains(t, v[0], module+"adapter → ")
}
