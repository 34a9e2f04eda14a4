package builtin

import (
	"fmt"
	"path"
	"strings"
)

// glob is a compiled file pattern. A pattern without a slash matches a
// file's name in any directory ("*.go"); one with a slash matches its
// whole path ("src/**/*_test.go"), where "**" is any number of
// directories, none included. Elements are path.Match patterns.
type glob struct {
	byName bool
	elems  []string
}

func compileGlob(pattern string) (glob, error) {
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" {
		return glob{}, fmt.Errorf("the glob is empty")
	}
	g := glob{byName: !strings.Contains(pattern, "/"), elems: strings.Split(pattern, "/")}
	for _, e := range g.elems {
		if e == "**" {
			continue
		}
		if strings.Contains(e, "**") {
			return glob{}, fmt.Errorf("glob %q: ** must be a whole path element, as in src/**/*.go", pattern)
		}
		if _, err := path.Match(e, ""); err != nil {
			return glob{}, fmt.Errorf("glob %q is malformed: %v", pattern, err)
		}
	}
	return g, nil
}

// match reports whether the slash-separated path p matches.
func (g glob) match(p string) bool {
	if g.byName {
		return matchElems(g.elems, []string{path.Base(p)})
	}
	return matchElems(g.elems, strings.Split(p, "/"))
}

func matchElems(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for pat = pat[1:]; len(pat) > 0 && pat[0] == "**"; pat = pat[1:] {
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchElems(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
