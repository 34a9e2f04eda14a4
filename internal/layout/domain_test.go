package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// domainPackage holds the domain model: the one place its names are
// defined.
const domainPackage = "internal/domain"

// domainNames are the domain's type and error names that must be defined
// once, in domainPackage.
var domainNames = []string{"Status", "Transition", "Checkpoint", "Execution", "Entry", "ErrConflict", "ErrSignalConsumed"}

// otherConcepts are the packages that define a domain name for something
// else, and why; anything not listed here is a copy.
var otherConcepts = map[string]string{
	"agentsdk/event.Checkpoint":    "the agent.checkpoint stream event (sequence and execution), not the row",
	"proto/agentree/v1.Checkpoint": "the API's generated message, converted from the row at the gateway",
	"agentsdk/agenttest.Execution": "the handle of an in-memory execution an agent author drives, not the row",
	"agentsdk.Entry":               "the entry as agents see it (no org, sequence or time); internal/step converts the row to it, once",
	"proto/agentree/v1.Entry":      "the API's generated message, converted from the row at the gateway",
	"internal/conformance.Entry":   "a runtime-neutral record with renamed IDs, to compare two runtimes' runs",
	"entrystore.Entry":             "alias, as entrystore.Status",
	"agentsdk/agenttest.Status":    "alias: agent authors read an in-memory execution's status (agenttest's doc.go)",
	"entrystore.Status":            "alias: entrystore's public API names the domain types (entrystore's doc.go)",
	"entrystore.Execution":         "alias, as entrystore.Status",
	"entrystore.Transition":        "alias, as entrystore.Status",
	"entrystore.Checkpoint":        "alias, as entrystore.Status",
	"entrystore.ErrConflict":       "the same value (domain.ErrConflict), as entrystore.Status",
	"entrystore.ErrSignalConsumed": "the same value (domain.ErrSignalConsumed), as entrystore.Status",
}

// declaration is a package-level type or var of one of domainNames.
type declaration struct {
	pkg, name string
	// copy: a type that is not an alias, or a var that is not just
	// domain.<name> (the same value under another package's name).
	copy bool
}

// declarations lists the package-level declarations of names in src, a
// package's non-test files.
func declarations(pkg string, files []*ast.File, names []string) []declaration {
	var out []declaration
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if slices.Contains(names, s.Name.Name) {
						out = append(out, declaration{pkg, s.Name.Name, !s.Assign.IsValid()})
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !slices.Contains(names, n.Name) {
							continue
						}
						same := false
						if i < len(s.Values) {
							if sel, ok := s.Values[i].(*ast.SelectorExpr); ok {
								x, ok := sel.X.(*ast.Ident)
								same = ok && x.Name == "domain" && sel.Sel.Name == n.Name
							}
						}
						out = append(out, declaration{pkg, n.Name, !same})
					}
				}
			}
		}
	}
	return out
}

// moduleFiles parses the module's non-test Go files, by package directory
// (relative to the module root).
func moduleFiles(t *testing.T) map[string][]*ast.File {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	fset := token.NewFileSet()
	out := map[string][]*ast.File{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], f)
		return nil
	})
	require.NoError(t, err)
	return out
}

// copies are the declarations of domainNames outside domainPackage that
// otherConcepts does not explain, one line each.
func copies(pkgs map[string][]*ast.File) []string {
	var out []string
	for pkg, files := range pkgs {
		for _, d := range declarations(pkg, files, domainNames) {
			key := d.pkg + "." + d.name
			if d.pkg == domainPackage || otherConcepts[key] != "" {
				continue
			}
			kind := "re-exports"
			if d.copy {
				kind = "defines its own"
			}
			out = append(out, key+": "+kind+" "+d.name+"; use "+domainPackage+"'s")
		}
	}
	slices.Sort(out)
	return out
}

// TestDomainDefinedOnce: a status, transition, checkpoint, execution row
// or conflict error is defined in internal/domain and nowhere else, so no
// store or runtime keeps a copy that another translates. A package that
// means something else by the name is listed, with why, in otherConcepts.
func TestDomainDefinedOnce(t *testing.T) {
	pkgs := moduleFiles(t)
	var defined []string
	for _, d := range declarations(domainPackage, pkgs[domainPackage], domainNames) {
		if d.copy {
			defined = append(defined, d.name)
		}
	}
	slices.Sort(defined)
	want := slices.Clone(domainNames)
	slices.Sort(want)
	require.Equal(t, want, defined, "%s defines the domain's names", domainPackage)
	require.Empty(t, copies(pkgs), "the domain is defined in more than one package")
	for key := range otherConcepts {
		pkg, name, _ := strings.Cut(key, ".")
		found := false
		for _, d := range declarations(pkg, pkgs[pkg], domainNames) {
			found = found || d.name == name
		}
		require.True(t, found, "otherConcepts lists %s, which is gone: drop the line", key)
	}
}

// TestDomainCheckerSeesCopies keeps TestDomainDefinedOnce honest: a
// package with its own Status, an alias or a wrapping ErrConflict is
// named.
func TestDomainCheckerSeesCopies(t *testing.T) {
	src := `package store
import "errors"
type Status string
type Checkpoint = domain.Checkpoint
var ErrConflict = errors.New("conflict")
var ErrSignalConsumed = domain.ErrSignalConsumed
`
	f, err := parser.ParseFile(token.NewFileSet(), "store.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	require.Equal(t, []string{
		"adapter/store.Checkpoint: re-exports Checkpoint; use internal/domain's",
		"adapter/store.ErrConflict: defines its own ErrConflict; use internal/domain's",
		"adapter/store.ErrSignalConsumed: re-exports ErrSignalConsumed; use internal/domain's",
		"adapter/store.Status: defines its own Status; use internal/domain's",
	}, copies(map[string][]*ast.File{"adapter/store": {f}}))
}

// TestDomainLinksOnlyTheStandardLibrary: every store and runtime links
// the domain model, so it links nothing heavy: no pgx, no Temporal, no
// other package of this module.
func TestDomainLinksOnlyTheStandardLibrary(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./"+domainPackage)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err)
	var deps []string
	for line := range strings.Lines(string(out)) {
		path, std, _ := strings.Cut(strings.TrimSpace(line), " ")
		deps = append(deps, path)
		if path != module+domainPackage {
			require.Equal(t, "true", std, "%s links %s, which is not the standard library", domainPackage, path)
		}
	}
	require.Contains(t, deps, "encoding/json", "go list -deps listed the dependencies")
}
