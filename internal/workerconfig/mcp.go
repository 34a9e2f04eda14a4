package workerconfig

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentree/agentree/agentsdk/tools/mcp"
)

// MCPServer is one MCP server whose tools the worker offers, each as
// <name>__<tool>. It runs Command over stdio or speaks streamable HTTP at
// URL: exactly one of the two.
//
// Values in Env and Headers (the server's and each organization's) may
// name the worker's environment variables as ${NAME}, or a file as
// ${file:/path} (its content, without a final newline: a mounted
// secret), read once at start ("$$" is a literal "$"); a variable named
// there that is unset or empty, or a file that cannot be read, stops the
// worker, naming it. Nothing else of the worker's environment reaches a
// stdio server but PATH, HOME, LANG, TMPDIR and TZ.
type MCPServer struct {
	// Name prefixes the server's tools: letters, digits and '-', at most
	// 32 characters; required, unique.
	Name string `yaml:"name"`
	// Command is the program to run, found in PATH; Args its arguments.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	// Env is the program's environment, beyond the few variables above.
	Env map[string]string `yaml:"env"`
	// URL is a streamable HTTP endpoint; Headers go with every request.
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Timeout bounds each call, and connecting at start; default 60s.
	Timeout time.Duration `yaml:"timeout"`
	// Orgs are the organizations, by slug, whose executions may see and
	// call the server's tools: a list of slugs, or a mapping from slug to
	// the env (or headers) set over the server's own for that
	// organization's calls, which then have their own session (and
	// process). "*" is every organization, on the server's credentials.
	// Required: a server acts with credentials, so the operator says
	// whose they are. Others neither see its tools nor can call them.
	Orgs MCPOrgs `yaml:"orgs"`
}

// MCPOrgs are an MCP server's organizations: each slug's credentials,
// empty for the server's own.
type MCPOrgs map[string]MCPAccess

// MCPAccess is what one organization's calls to an MCP server set over
// the server's env or headers.
type MCPAccess struct {
	Env     map[string]string `yaml:"env"`
	Headers map[string]string `yaml:"headers"`
}

// UnmarshalYAML takes a list of slugs as well as a mapping.
func (o *MCPOrgs) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var slugs []string
		if err := n.Decode(&slugs); err != nil {
			return err
		}
		*o = MCPOrgs{}
		for _, s := range slugs {
			(*o)[s] = MCPAccess{}
		}
		return nil
	}
	// Decoded by hand: a node's Decode does not refuse unknown fields.
	var m map[string]map[string]map[string]string
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: orgs: give a list of organization slugs, or a mapping from slug to {env: …} or {headers: …}", n.Line)
	}
	*o = MCPOrgs{}
	for slug, a := range m {
		for k := range a {
			if k != "env" && k != "headers" {
				return fmt.Errorf("line %d: orgs.%s: unknown field %q (an organization takes env or headers)", n.Line, slug, k)
			}
		}
		(*o)[slug] = MCPAccess{Env: a["env"], Headers: a["headers"]}
	}
	return nil
}

// withMCPDefaults validates the mcp section and fills in its defaults.
func withMCPDefaults(servers []MCPServer, bad func(string, ...any)) []MCPServer {
	if len(servers) == 0 {
		return nil
	}
	names := map[string]bool{}
	for i := range servers {
		s := &servers[i]
		field := fmt.Sprintf("mcp[%d]", i)
		if s.Name == "" {
			bad("%s.name: required", field)
		} else if err := mcp.CheckName(s.Name); err != nil {
			bad("%s.name: %v", field, err)
		} else if names[s.Name] {
			bad("%s.name: %q is used by an earlier server", field, s.Name)
		}
		names[s.Name] = true
		switch {
		case (s.Command == "") == (s.URL == ""):
			bad("%s: give command (stdio) or url (streamable HTTP), not both or neither", field)
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0):
			bad("%s: args and env are for a command; an url server takes headers", field)
		case s.Command != "" && len(s.Headers) > 0:
			bad("%s: headers are for an url server; a command takes env", field)
		case s.URL != "" && !httpURL.MatchString(s.URL):
			bad("%s.url: %q is not an http(s) URL", field, s.URL)
		}
		if s.Timeout < 0 {
			bad("%s.timeout: must not be negative", field)
		}
		if len(s.Orgs) == 0 {
			bad(`%s.orgs: required: the organizations (slugs) whose executions may use the server, or ["*"] for every one`, field)
		}
		for _, slug := range slices.Sorted(maps.Keys(s.Orgs)) {
			a := s.Orgs[slug]
			switch {
			case slug != mcp.AnyOrg && !orgSlug.MatchString(slug):
				bad("%s.orgs: %q is not an organization slug", field, slug)
			case s.URL != "" && len(a.Env) > 0:
				bad("%s.orgs.%s: env is for a command; an url server takes headers", field, slug)
			case s.Command != "" && len(a.Headers) > 0:
				bad("%s.orgs.%s: headers are for an url server; a command takes env", field, slug)
			}
			for what, m := range map[string]map[string]string{"env": a.Env, "headers": a.Headers} {
				for _, k := range slices.Sorted(maps.Keys(m)) {
					if _, err := expand(m[k], func(string) string { return "x" }); err != nil {
						bad("%s.orgs.%s.%s.%s: %v", field, slug, what, k, err)
					}
				}
			}
		}
		s.Timeout = cmp.Or(s.Timeout, mcp.DefaultTimeout)
		for what, m := range map[string]map[string]string{"env": s.Env, "headers": s.Headers} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if _, err := expand(m[k], func(string) string { return "x" }); err != nil {
					bad("%s.%s.%s: %v", field, what, k, err)
				}
			}
		}
	}
	return servers
}

// orgSlug is what an organization's slug may be (entrystore's rule).
var orgSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// envRef is a ${NAME} or ${file:/path} reference, or "$$".
var envRef = regexp.MustCompile(`\$\$|\$\{([^}]*)\}?`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces each ${NAME} in s with lookup(NAME), each
// ${file:/path} with lookup("file:/path"), and "$$" with "$".
func expand(s string, lookup func(string) string) (string, error) {
	var errs []error
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := strings.TrimSuffix(strings.TrimPrefix(m, "${"), "}")
		if path, ok := strings.CutPrefix(name, "file:"); ok && strings.HasSuffix(m, "}") {
			if !filepath.IsAbs(path) {
				errs = append(errs, fmt.Errorf("%q: give the file's absolute path", m))
				return m
			}
			return lookup(name)
		}
		if !strings.HasSuffix(m, "}") || !envName.MatchString(name) {
			errs = append(errs, fmt.Errorf("%q is not a ${NAME} reference to an environment variable", m))
			return m
		}
		return lookup(name)
	})
	return out, errors.Join(errs...)
}

// resolve reads the variables m's values name from the worker's
// environment; one that is unset or empty is an error naming it.
func resolve(what string, m map[string]string) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var missing []string
		v, err := expand(m[k], func(name string) string {
			if path, ok := strings.CutPrefix(name, "file:"); ok {
				b, err := os.ReadFile(path)
				if err != nil || len(b) == 0 {
					missing = append(missing, path)
				}
				return strings.TrimSuffix(string(b), "\n")
			}
			v := os.Getenv(name)
			if v == "" {
				missing = append(missing, "$"+name)
			}
			return v
		})
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", what, k, err)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s.%s: %s is empty or unreadable: set it, or remove the server", what, k, strings.Join(missing, " and "))
		}
		out[k] = v
	}
	return out, nil
}

// mcpServers are the section's servers with their values resolved and
// their organizations named by ID: orgID gives a slug's.
func mcpServers(servers []MCPServer, orgID func(slug string) (string, error)) ([]mcp.Server, error) {
	var out []mcp.Server
	for i, s := range servers {
		srv, err := mcpServer(s, orgID)
		if err != nil {
			return nil, fmt.Errorf("mcp[%d] (%s): %w", i, s.Name, err)
		}
		out = append(out, srv)
	}
	return out, nil
}

func mcpServer(s MCPServer, orgID func(slug string) (string, error)) (mcp.Server, error) {
	env, err := resolve("env", s.Env)
	if err != nil {
		return mcp.Server{}, err
	}
	headers, err := resolve("headers", s.Headers)
	if err != nil {
		return mcp.Server{}, err
	}
	srv := mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: env,
		URL: s.URL, Headers: headers, Timeout: s.Timeout, Orgs: map[string]mcp.Access{}}
	for _, slug := range slices.Sorted(maps.Keys(s.Orgs)) {
		var a mcp.Access
		if a.Env, err = resolve("orgs."+slug+".env", s.Orgs[slug].Env); err != nil {
			return mcp.Server{}, err
		}
		if a.Headers, err = resolve("orgs."+slug+".headers", s.Orgs[slug].Headers); err != nil {
			return mcp.Server{}, err
		}
		id := slug
		if slug != mcp.AnyOrg {
			if id, err = orgID(slug); err != nil {
				return mcp.Server{}, fmt.Errorf("orgs: %s: %w", slug, err)
			}
		}
		srv.Orgs[id] = a
	}
	return srv, nil
}
