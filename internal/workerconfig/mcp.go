package workerconfig

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk/tools/mcp"
)

// MCPServer is one MCP server whose tools the worker offers, each as
// <name>__<tool>. It runs Command over stdio or speaks streamable HTTP at
// URL: exactly one of the two.
//
// Values in Env and Headers may name the worker's environment variables
// as ${NAME}, read once at start ("$$" is a literal "$"); a variable named
// there that is unset or empty stops the worker, naming it. Nothing else
// of the worker's environment reaches a stdio server but PATH, HOME,
// LANG, TMPDIR and TZ.
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

// envRef is a ${NAME} reference, or "$$".
var envRef = regexp.MustCompile(`\$\$|\$\{([^}]*)\}?`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces each ${NAME} in s with lookup(NAME) and "$$" with "$".
func expand(s string, lookup func(string) string) (string, error) {
	var errs []error
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := strings.TrimSuffix(strings.TrimPrefix(m, "${"), "}")
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
			return nil, fmt.Errorf("%s.%s: %s is empty: set it, or remove the server", what, k, strings.Join(missing, " and "))
		}
		out[k] = v
	}
	return out, nil
}

// mcpServers are the section's servers with their values resolved.
func mcpServers(servers []MCPServer) ([]mcp.Server, error) {
	var out []mcp.Server
	for i, s := range servers {
		env, err := resolve("env", s.Env)
		if err == nil {
			var headers map[string]string
			headers, err = resolve("headers", s.Headers)
			out = append(out, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: env,
				URL: s.URL, Headers: headers, Timeout: s.Timeout})
		}
		if err != nil {
			return nil, fmt.Errorf("mcp[%d] (%s): %w", i, s.Name, err)
		}
	}
	return out, nil
}
