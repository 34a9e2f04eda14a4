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

// harness says whether a package is one of the project's own measuring
// and fault-injection harnesses filed under samples/ (make bench, make
// chaos): they start their own Postgres schemas and measure the store,
// so they may link pgx. Every other package under samples/ is a sample.
func harness(p string) bool {
	for _, h := range []string{module + "samples/bench", module + "samples/chaos"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
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
		if harness(pkg) {
			continue
		}
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
