package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// Defaults of BashOptions.
const (
	DefaultBashTimeout    = 2 * time.Minute
	DefaultBashMaxTimeout = 10 * time.Minute
	// DefaultBashOutputLimit is large enough that the output of a build or
	// a test run reaches the content store whole (the model sees only its
	// head and tail, cut by the execution's toolOutputLimit), and small
	// enough that a runaway command costs the worker a bounded amount of
	// memory.
	DefaultBashOutputLimit = 16 << 20
)

// DefaultBashEnv is the environment allow-list of a worker that configures
// none. HOME is always the workspace.
var DefaultBashEnv = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}

// defaultPath is PATH when the worker has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// BashOptions configure the bash tool. The zero value of each field means
// its default, given in its comment.
type BashOptions struct {
	// Timeout is a command's time limit when the model asks for none;
	// default DefaultBashTimeout.
	Timeout time.Duration
	// MaxTimeout is the longest a model may ask for; default
	// DefaultBashMaxTimeout.
	MaxTimeout time.Duration
	// OutputLimit is the most bytes of a command's output (stdout and
	// stderr together) the worker holds and returns: past it the head and
	// tail are kept and the middle dropped, with a note naming the file of
	// the workspace (.agentree/bash/<tool call ID>.log, up to 1 GiB) that
	// holds the whole output. Default DefaultBashOutputLimit.
	OutputLimit int
	// Env is the allow-list of the worker's environment variables a
	// command sees, by name; an entry NAME=value sets a value instead.
	// Anything not listed (model keys, DATABASE_URL) is never visible.
	// nil: DefaultBashEnv.
	Env []string
	// RequireIsolation makes a host that cannot take the network away
	// from commands and give them their own PID namespace an error (Tools
	// fails) rather than running them with the worker's network and in
	// sight of its processes (a same-user process can read another's
	// /proc/PID/environ, and with it the worker's keys).
	RequireIsolation bool
	// Deny are Go regular expressions a command is refused for matching;
	// nil: DefaultDeny; empty: none.
	Deny []string
}

// bash is the configured tool.
type bash struct {
	ws        workspace.Workspaces
	opts      BashOptions
	deny      denyList
	isolation Isolation
}

func newBash(ws workspace.Workspaces, o BashOptions) (*bash, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultBashTimeout
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = DefaultBashMaxTimeout
	}
	if o.OutputLimit == 0 {
		o.OutputLimit = DefaultBashOutputLimit
	}
	if o.Env == nil {
		o.Env = DefaultBashEnv
	}
	if o.Deny == nil {
		o.Deny = DefaultDeny
	}
	switch {
	case o.Timeout < 0 || o.MaxTimeout < 0 || o.OutputLimit < 0:
		return nil, errors.New("bash: timeout, maxTimeout and outputLimit must not be negative")
	case o.Timeout > o.MaxTimeout:
		return nil, fmt.Errorf("bash: the default timeout %s is above maxTimeout %s", o.Timeout, o.MaxTimeout)
	}
	deny, err := compileDeny(o.Deny)
	if err != nil {
		return nil, err
	}
	iso := DetectIsolation()
	if o.RequireIsolation && !(iso.NoNetwork && iso.OwnProcesses) {
		return nil, fmt.Errorf("bash: requireIsolation is set but this host offers only %s: "+
			"install bubblewrap (bwrap) or allow unprivileged user and PID namespaces (unshare)", iso)
	}
	return &bash{ws: ws, opts: o, deny: deny, isolation: iso}, nil
}

// BashArgs are bash's arguments.
type BashArgs struct {
	Command        string `json:"command" jsonschema:"a bash script, run with bash -c in the workspace"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"the time limit in seconds; default and maximum as the tool's description says"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (BashArgs) RefineSchema(s *jsonschema.Schema) {
	nonEmpty(s, "command")
	atLeast(s, 0, "timeout_seconds")
}

func (b *bash) tool() *agentsdk.Tool {
	network := "has no network"
	if !b.isolation.NoNetwork {
		network = "has the worker's network"
	}
	desc := fmt.Sprintf("Runs a bash script in the workspace (the working directory and HOME) and returns its "+
		"output (stdout and stderr together) and exit status. It %s. Time limit %s by default, at most %s "+
		"with timeout_seconds; on timeout every process it started is killed. Long output is cut to its head "+
		"and tail. Prefer read_file, grep and edit_file for files.",
		network, b.opts.Timeout, b.opts.MaxTimeout)
	return withPolicy(agentsdk.NewTool(BashTool, desc, func(ctx context.Context, call agentsdk.ToolInvocation, a BashArgs) (string, error) {
		return b.run(ctx, call, a)
	}), agentsdk.PolicyAsk, agentsdk.RiskHigh)
}

func (b *bash) run(ctx context.Context, call agentsdk.ToolInvocation, a BashArgs) (string, error) {
	timeout := b.opts.Timeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
		if timeout > b.opts.MaxTimeout {
			return "", fmt.Errorf("timeout_seconds %d is above this worker's maximum of %d", a.TimeoutSeconds, int(b.opts.MaxTimeout/time.Second))
		}
	}
	if err := b.deny.check(a.Command); err != nil {
		return "", err
	}
	w, err := b.ws.Open(call.ExecutionID)
	if err != nil {
		return "", err
	}
	defer w.Close()

	res, err := b.exec(ctx, w, a.Command, timeout, call.Emit, spillFor(w, call.ToolCallID))
	if err != nil {
		return "", err
	}
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case res.timedOut:
		return "", fmt.Errorf("timed out after %s: the command and every process it started were killed\n%s", timeout, res.report(b.isolation))
	}
	return res.report(b.isolation), nil
}

// result is how a command ended.
type result struct {
	output   string
	total    int64
	exit     int
	signal   string
	timedOut bool
}

// report is what the model reads: the output, then one line with the
// exit status and the isolation in force (kept in the tool-call record
// with the output).
func (r result) report(iso Isolation) string {
	var s strings.Builder
	s.WriteString(r.output)
	if r.output != "" && !strings.HasSuffix(r.output, "\n") {
		s.WriteByte('\n')
	}
	s.WriteByte('[')
	if r.total == 0 {
		s.WriteString("no output; ")
	}
	switch {
	case r.timedOut:
		s.WriteString("timed out")
	case r.signal != "":
		fmt.Fprintf(&s, "killed by %s", r.signal)
	default:
		fmt.Fprintf(&s, "exit status %d", r.exit)
	}
	fmt.Fprintf(&s, "; isolation: %s]", iso)
	return s.String()
}

// exec runs command in dir in a process group of its own and waits for
// it. On timeout or ctx's end the whole group is killed; when the command
// ends on its own, whatever it left running in the background is killed
// too, so no process of a tool call outlives it.
func (b *bash) exec(ctx context.Context, w *workspace.Workspace, command string, timeout time.Duration, emit func(any), sp *spill) (result, error) {
	dir := w.Dir()
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		return result{}, errors.New("bash is not installed on this worker")
	}
	argv := b.isolation.wrap(bashPath, dir, command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = b.environment(dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	// Pipes of our own rather than exec's: exec's copying goroutines
	// would keep Wait waiting for a background process that still holds
	// the pipe, where this kills the group as soon as bash exits.
	capt := newCapture(b.opts.OutputLimit, sp)
	stream := newStreamer(emit)
	readers := make(chan struct{}, 2)
	var ends, rds []*os.File
	for _, name := range []string{"stdout", "stderr"} {
		pr, pw, err := os.Pipe()
		if err != nil {
			for _, e := range ends {
				e.Close()
			}
			stream.close()
			return result{}, fmt.Errorf("bash: pipe: %w", err)
		}
		defer pr.Close()
		ends, rds = append(ends, pw), append(rds, pr)
		if name == "stdout" {
			cmd.Stdout = pw
		} else {
			cmd.Stderr = pw
		}
		go func() {
			defer func() { readers <- struct{}{} }()
			copyTo(sink{name: name, c: capt, s: stream}, pr)
		}()
	}
	startErr := cmd.Start()
	for _, e := range ends {
		e.Close()
	}
	if startErr != nil {
		stream.close()
		return result{}, fmt.Errorf("bash: start: %w", startErr)
	}
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	exited := make(chan struct{})
	go func() {
		select {
		case <-tctx.Done():
			killGroup()
		case <-exited:
		}
	}()
	waitErr := cmd.Wait()
	close(exited)
	killGroup()
	// Every writer of the pipes is dead now, unless a process left the
	// group (setsid); do not wait on it for long.
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	for left := 2; left > 0; {
		select {
		case <-readers:
			left--
		case <-grace.C:
			for _, r := range rds {
				r.Close()
			}
		}
	}
	stream.close()
	capt.close()

	res := result{output: capt.String(), total: capt.Total()}
	res.timedOut = ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded)
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			res.signal = st.Signal().String()
		}
		res.exit = ee.ExitCode()
	default:
		return result{}, fmt.Errorf("bash: wait: %w", waitErr)
	}
	return res, nil
}

// spillDir is where spill files go in a workspace.
const spillDir = ".agentree/bash"

// spillFor is the spill file of a call's output, named by its tool-call
// ID (or, with none, a fresh name).
func spillFor(w *workspace.Workspace, toolCallID string) *spill {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, toolCallID)
	if name == "" {
		name = fmt.Sprintf("output-%d", time.Now().UnixNano())
	}
	name = spillDir + "/" + name + ".log"
	return &spill{name: name, open: func() (io.WriteCloser, error) {
		if err := w.Root().MkdirAll(spillDir, 0o755); err != nil {
			return nil, workspace.Friendly(spillDir, err)
		}
		f, err := w.Root().OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, workspace.Friendly(name, err)
		}
		return f, nil
	}}
}

// copyTo reads r into w until r ends or is closed.
func copyTo(w sink, r *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// environment is the command's environment: the allow-listed variables
// the worker has, values the list sets, and HOME and PWD the workspace.
func (b *bash) environment(dir string) []string {
	env := map[string]string{}
	for _, e := range b.opts.Env {
		if name, value, ok := strings.Cut(e, "="); ok {
			env[name] = value
		} else if v, ok := os.LookupEnv(e); ok {
			env[e] = v
		}
	}
	if env["PATH"] == "" {
		env["PATH"] = defaultPath
	}
	env["HOME"], env["PWD"] = dir, dir
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
