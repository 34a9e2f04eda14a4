package workerconfig

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// Workspace is where the builtin tool set works: one directory per
// execution, and how its bash tool runs commands.
type Workspace struct {
	// Root holds one directory per execution, named by its ID; default
	// $TMPDIR/agentree-workspaces.
	Root string `yaml:"root"`
	// Bash configures the bash tool.
	Bash Bash `yaml:"bash"`
}

// Bash configures the builtin set's bash tool.
type Bash struct {
	// Timeout is a command's time limit when the model asks for none;
	// default 2m.
	Timeout time.Duration `yaml:"timeout"`
	// MaxTimeout is the longest a model may ask for; default 10m.
	MaxTimeout time.Duration `yaml:"maxTimeout"`
	// OutputLimit is the most bytes of a command's output the worker
	// holds; default 16777216 (16 MiB). Up to it the whole output reaches
	// the content store (the model sees head and tail, cut by the agent's
	// toolOutputLimit); past it the worker keeps head and tail and the
	// whole goes to .agentree/bash/<tool call ID>.log in the workspace.
	OutputLimit int `yaml:"outputLimit"`
	// Env names the worker's environment variables a command sees
	// (NAME=value sets one); nothing else is visible, so model keys and
	// DATABASE_URL never are. HOME is the workspace. Default PATH, LANG,
	// LC_ALL, LC_CTYPE, TERM, TZ.
	Env []string `yaml:"env"`
	// RequireIsolation makes the worker refuse to start where commands
	// cannot get a network and PID namespace of their own (bwrap or
	// unshare); default false: it runs them with whatever the host allows
	// and each result says which.
	RequireIsolation bool `yaml:"requireIsolation"`
	// Deny are Go regular expressions a command is refused for matching;
	// default builtin.DefaultDeny; [] none.
	Deny []string `yaml:"deny"`
}

// withDefaults fills in the workspace's defaults and reports what is
// wrong with it.
func (w Workspace) withDefaults(bad func(format string, args ...any)) Workspace {
	w.Root = cmp.Or(w.Root, workspace.DefaultRoot())
	b := &w.Bash
	b.Timeout = cmp.Or(b.Timeout, builtin.DefaultBashTimeout)
	b.MaxTimeout = cmp.Or(b.MaxTimeout, builtin.DefaultBashMaxTimeout)
	b.OutputLimit = cmp.Or(b.OutputLimit, builtin.DefaultBashOutputLimit)
	if b.Env == nil {
		b.Env = slices.Clone(builtin.DefaultBashEnv)
	}
	if b.Deny == nil {
		b.Deny = slices.Clone(builtin.DefaultDeny)
	}
	switch {
	case b.Timeout < 0:
		bad("workspace.bash.timeout: %s is negative", b.Timeout)
	case b.MaxTimeout < 0:
		bad("workspace.bash.maxTimeout: %s is negative", b.MaxTimeout)
	case b.Timeout > b.MaxTimeout:
		bad("workspace.bash.timeout: %s is above maxTimeout (%s)", b.Timeout, b.MaxTimeout)
	}
	if b.OutputLimit < 0 {
		bad("workspace.bash.outputLimit: %d is negative", b.OutputLimit)
	}
	for i, e := range b.Env {
		if e == "" || e[0] == '=' {
			bad("workspace.bash.env[%d]: %q names no variable", i, e)
		}
	}
	for i, p := range b.Deny {
		if _, err := regexp.Compile(p); err != nil {
			bad("workspace.bash.deny[%d]: %q is not a Go regular expression", i, p)
		}
	}
	return w
}

// builtinTools builds the builtin tool set in c's workspace.
func builtinTools(c Config) ([]*agentsdk.Tool, error) {
	b := c.Workspace.Bash
	tools, err := builtin.Tools(builtin.Options{Root: c.Workspace.Root, Bash: builtin.BashOptions{
		Timeout: b.Timeout, MaxTimeout: b.MaxTimeout, OutputLimit: b.OutputLimit, Env: b.Env,
		RequireIsolation: b.RequireIsolation, Deny: b.Deny,
	}})
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return tools, nil
}
