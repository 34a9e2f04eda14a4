package layout_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/agentree/agentree/"

// graph is the import graph go list -deps prints for some patterns: the
// packages the patterns name (roots) and what each imports.
type graph struct {
	roots   []string
	imports map[string][]string
}

// load lists patterns' packages and all they depend on (tests excluded:
// a test's imports are not linked into the program).
func load(t *testing.T, patterns ...string) graph {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}|{{.DepOnly}}|{{join .Imports \",\"}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps %s", strings.Join(patterns, " "))
	g := graph{imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		parts := strings.SplitN(strings.TrimSpace(line), "|", 3)
		require.Len(t, parts, 3, "go list printed %q", line)
		if parts[2] != "" {
			g.imports[parts[0]] = strings.Split(parts[2], ",")
		} else {
			g.imports[parts[0]] = nil
		}
		if parts[1] == "false" {
			g.roots = append(g.roots, parts[0])
		}
	}
	require.NotEmpty(t, g.roots, "go list -deps %s named no package", strings.Join(patterns, " "))
	return g
}

// chain is the import chain from root to the first package forbidden
// reports, or nil when root reaches none. It is what a failure names, so
// the import to cut is in the message.
func (g graph) chain(root string, forbidden func(string) bool) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if forbidden(p) {
			var out []string
			for ; p != ""; p = prev[p] {
				out = append(out, p)
			}
			slices.Reverse(out)
			return out
		}
		for _, d := range g.imports[p] {
			if _, seen := prev[d]; !seen {
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return nil
}

// violations are the chains by which the roots keep reaches a forbidden
// package, one line each.
func (g graph) violations(keep func(root string) bool, forbidden func(string) bool) []string {
	var out []string
	for _, r := range g.roots {
		if !keep(r) {
			continue
		}
		if c := g.chain(r, forbidden); c != nil {
			out = append(out, strings.Join(c, " → "))
		}
	}
	return out
}

func all(string) bool { return true }

func is(paths ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(paths, p) }
}

// engineOrWorkflow is what a client must not link: the segment engine
// and Temporal's workflow package (workflow code).
var engineOrWorkflow = is(module+"internal/engine", "go.temporal.io/sdk/workflow")

// TestClientsLinkNeitherEngineNorWorkflow: the gateway and the execution
// client start and read executions through internal/wire; a change to the
// engine or to workflow code rebuilds neither, and neither can run
// workflow code by mistake.
func TestClientsLinkNeitherEngineNorWorkflow(t *testing.T) {
	g := load(t, "./gateway/...", "./adapter/client/...")
	require.Contains(t, g.roots, module+"adapter/client")
	require.Contains(t, g.imports, module+"internal/wire", "the clients reach the wire types")
	require.Empty(t, g.violations(all, engineOrWorkflow), "a client links the engine or the workflow package")
}

// underInternal is the module's runtime, which agent authors never see
// (agentsdk/internal, the SDK's own helpers, is not under it).
func underInternal(p string) bool { return strings.HasPrefix(p, module+"internal/") }

// TestSDKLinksNothingInternal: agentsdk is what agent and tool authors
// import, so none of it reaches the runtime under internal/. agenttest is
// the exception: it is the in-memory runtime, the engine bound to direct
// calls.
func TestSDKLinksNothingInternal(t *testing.T) {
	g := load(t, "./agentsdk/...")
	keep := func(root string) bool {
		return root != module+"agentsdk/agenttest" && !strings.HasPrefix(root, module+"agentsdk/agenttest/")
	}
	require.Contains(t, g.roots, module+"agentsdk/react")
	require.Empty(t, g.violations(keep, underInternal), "an agentsdk package links the runtime under internal/")
}

// TestCheckerSeesViolations keeps the tests above honest: the same
// checker, run on packages that do link what they forbid, names the
// chain, so an empty answer above means there is none.
func TestCheckerSeesViolations(t *testing.T) {
	g := load(t, "./adapter", "./agentsdk/agenttest")
	v := g.violations(is(module+"adapter"), engineOrWorkflow)
	require.Len(t, v, 1)
	require.True(t, strings.HasPrefix(v[0], module+"adapter → "), v[0])
	v = g.violations(is(module+"agentsdk/agenttest"), underInternal)
	require.Len(t, v, 1)
	require.True(t, strings.HasPrefix(v[0], module+"agentsdk/agenttest → "+module+"internal/"), v[0])
}
