package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// DefaultSpillLimit bounds a call's spill file: enough for the log of a
// large build, and the workspace's quota bounds the rest.
const DefaultSpillLimit = 256 << 20

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
	// the workspace (.agentree/bash/<tool call ID>.log, up to SpillLimit)
	// that holds the whole output. Default DefaultBashOutputLimit.
	OutputLimit int
	// SpillLimit bounds that file; default DefaultSpillLimit.
	SpillLimit int64
	// Env is the allow-list of the worker's environment variables a
	// command sees, by name; an entry NAME=value sets a value instead.
	// Anything not listed (model keys, DATABASE_URL) is never visible.
	// nil: DefaultBashEnv.
	Env []string
	// Isolation is the level commands run under: IsolationBwrap (the
	// default) or IsolationNone. Where the level cannot run (no bwrap, no
	// user namespaces), Tools does not offer bash at all, and says why:
	// it never falls back to a weaker level.
	Isolation string
	// Network gives commands in the jail the worker's network; default
	// none (only a loopback of their own).
	Network bool
	// UID and GID are who commands run as in the jail; default
	// DefaultSandboxUID.
	UID, GID int
	// Limits bound each call's memory, processes, CPU time and file size.
	Limits Limits
	// Deny are Go regular expressions a command is refused for matching;
	// nil: DefaultDeny; empty: none.
	Deny []string
}

// bash is the configured tool.
type bash struct {
	ws     workspace.Workspaces
	opts   BashOptions
	deny   denyList
	jail   *jail
	pids   pidsCgroups
	limits Limits
}

// newBash checks o and prepares the jail. It fails on options that
// cannot work; unavailable says why the configured isolation cannot run
// on this host, in which case b is nil and bash is not offered.
func newBash(ws workspace.Workspaces, o BashOptions) (b *bash, unavailable, err error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultBashTimeout
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = DefaultBashMaxTimeout
	}
	if o.OutputLimit == 0 {
		o.OutputLimit = DefaultBashOutputLimit
	}
	if o.SpillLimit == 0 {
		o.SpillLimit = DefaultSpillLimit
	}
	if o.Env == nil {
		o.Env = DefaultBashEnv
	}
	if o.Deny == nil {
		o.Deny = DefaultDeny
	}
	if o.Isolation == "" {
		o.Isolation = IsolationBwrap
	}
	if o.UID == 0 {
		o.UID = DefaultSandboxUID
	}
	if o.GID == 0 {
		o.GID = DefaultSandboxUID
	}
	switch {
	case o.Timeout < 0 || o.MaxTimeout < 0 || o.OutputLimit < 0 || o.SpillLimit < 0:
		return nil, nil, errors.New("bash: timeout, maxTimeout, outputLimit and spillLimit must not be negative")
	case o.Timeout > o.MaxTimeout:
		return nil, nil, fmt.Errorf("bash: the default timeout %s is above maxTimeout %s", o.Timeout, o.MaxTimeout)
	case !slices.Contains(IsolationLevels, o.Isolation):
		return nil, nil, fmt.Errorf("bash: isolation %q is not a level (known: %s)", o.Isolation, strings.Join(IsolationLevels, ", "))
	case o.UID < 0 || o.GID < 0:
		return nil, nil, errors.New("bash: uid and gid must not be negative")
	case o.Network && o.Isolation == IsolationNone:
		return nil, nil, errors.New("bash: network applies to the bwrap jail; with isolation none commands have the worker's network anyway")
	}
	deny, err := compileDeny(o.Deny)
	if err != nil {
		return nil, nil, err
	}
	iso := Isolation{Level: o.Isolation, Network: o.Network || o.Isolation == IsolationNone, UID: o.UID, GID: o.GID}
	j, err := newJail(iso, filepath.Join(ws.Root, ".sandbox"))
	if err != nil {
		return nil, fmt.Errorf("isolation %s: %w", o.Isolation, err), nil
	}
	return &bash{ws: ws, opts: o, deny: deny, jail: j, pids: findPidsCgroups(), limits: o.Limits.withDefaults()}, nil, nil
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
	if b.jail.iso.Network {
		network = "has the worker's network"
	}
	where := "in a sandbox that holds only the workspace (at " + jailDir + ") and the system's programs"
	if b.jail.iso.Level == IsolationNone {
		where = "WITHOUT ISOLATION, as the worker's user on the worker's host (the operator chose isolation: none)"
	}
	desc := fmt.Sprintf("Runs a bash script in the workspace (the working directory and HOME) and returns its "+
		"output (stdout and stderr together) and exit status. It runs %s and %s. Time limit %s by default, at most %s "+
		"with timeout_seconds; on timeout every process it started is killed. Limits: %s; workspace quota %s. "+
		"Long output is cut to its head and tail. Prefer read_file, grep and edit_file for files.",
		where, network, b.opts.Timeout, b.opts.MaxTimeout, b.limits, quotaString(b.ws.Quota))
	t := withPolicy(agentsdk.NewTool(BashTool, desc, func(ctx context.Context, call agentsdk.ToolInvocation, a BashArgs) (string, error) {
		return b.run(ctx, call, a)
	}), agentsdk.PolicyAsk, agentsdk.RiskHigh)
	// A script may run for minutes and must not be cut and run again: an
	// activity from its first attempt, heartbeating its output.
	t.LongRunning = true
	return t
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

	res, err := b.exec(ctx, w, a.Command, timeout, call.Emit, b.spillFor(w, call.ToolCallID))
	if err != nil {
		return "", err
	}
	report := res.report(b.jail.iso, b.limits)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case res.overQuota != nil:
		return "", fmt.Errorf("%w\n%s", res.overQuota, report)
	case res.timedOut:
		return "", fmt.Errorf("timed out after %s: the command and every process it started were killed\n%s", timeout, report)
	case res.limit != "":
		return "", fmt.Errorf("%s (this worker's limits: %s)\n%s", res.limit, b.limits, report)
	}
	return report, nil
}

func quotaString(q int64) string {
	if q <= 0 {
		return "none"
	}
	return workspace.Bytes(q)
}

// result is how a command ended.
type result struct {
	output   string
	total    int64
	exit     int
	signal   syscall.Signal
	timedOut bool
	// limit says which limit of the call stopped it, if one did.
	limit string
	// overQuota is set when the workspace passed its quota during the
	// call, which killed it.
	overQuota error
}

// report is what the model reads: the output, then one line with the
// exit status, the isolation in force and, when the command failed, the
// limits (kept in the tool-call record with the output).
func (r result) report(iso Isolation, limits Limits) string {
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
	case r.signal != 0:
		fmt.Fprintf(&s, "killed by signal %d (%s)", int(r.signal), r.signal)
	default:
		fmt.Fprintf(&s, "exit status %d", r.exit)
	}
	fmt.Fprintf(&s, "; isolation: %s", iso)
	if r.exit != 0 || r.signal != 0 {
		// A limit may be why (a process that could not allocate memory
		// fails in its own words): the model should know them.
		fmt.Fprintf(&s, "; limits: %s", limits)
	}
	s.WriteByte(']')
	return s.String()
}

// exec runs command in dir in a process group of its own and waits for
// it. On timeout or ctx's end the whole group is killed; when the command
// ends on its own, whatever it left running in the background is killed
// too, so no process of a tool call outlives it.
func (b *bash) exec(ctx context.Context, w *workspace.Workspace, command string, timeout time.Duration, emit func(any), sp *spill) (result, error) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		return result{}, errors.New("bash is not installed on this worker")
	}
	cg, err := b.pids.create(b.limits.Processes)
	if err != nil {
		return result{}, err
	}
	defer cg.remove()
	scratch, doneScratch, err := b.jail.scratch(w.Dir())
	if err != nil {
		return result{}, err
	}
	defer doneScratch()
	env := b.environment(b.jail.dir(w.Dir()))
	// The jail's command line behind the wrapper that sets the limits;
	// the wrapper and bwrap get the command's environment too, so not
	// even the jail's PID 1 (bwrap) holds the worker's.
	argv := append([]string{bashPath, "-c", b.limits.wrapper(cg.procs()), "agentree-sandbox"},
		b.jail.argv(bashPath, w.Dir(), scratch, command, env)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = w.Dir()
	if b.jail.iso.Level != IsolationNone {
		// Not even bwrap's PWD, which the jail's /proc/1/environ shows,
		// names a host path.
		cmd.Dir = "/"
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	files, closeFiles, err := b.jail.extraFiles()
	if err != nil {
		return result{}, err
	}
	defer closeFiles()
	cmd.ExtraFiles = files

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
	var overQuota error
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		overQuota = watchQuota(tctx, w, exited, killGroup)
	}()
	waitErr := cmd.Wait()
	close(exited)
	killGroup()
	<-watched
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

	if overQuota == nil {
		// What the command wrote at its end, between measures, and before
		// its /tmp goes.
		if err := w.CheckQuota(); errors.Is(err, workspace.ErrOverQuota) {
			overQuota = err
		}
	}
	res := result{output: capt.String(), total: capt.Total(), overQuota: overQuota}
	res.timedOut = overQuota == nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded)
	var ee *exec.ExitError
	var sig syscall.Signal
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			sig = st.Signal()
			res.signal = sig
		}
		res.exit = ee.ExitCode()
	default:
		return result{}, fmt.Errorf("bash: wait: %w", waitErr)
	}
	// A process the kernel stopped for a limit dies of its signal; the
	// shell (or bwrap) above it exits 128 + that signal.
	switch {
	case sig == syscall.SIGXCPU || res.exit == 128+int(syscall.SIGXCPU):
		res.limit = "a process used up its CPU time limit and was killed"
	case sig == syscall.SIGXFSZ || res.exit == 128+int(syscall.SIGXFSZ):
		res.limit = "a process tried to write a file past the file size limit and was killed"
	case cg.hitMax():
		res.limit = "the command reached the process limit: a fork was refused"
	}
	return res, nil
}

// spillDir is where spill files go in a workspace.
const spillDir = ".agentree/bash"

// spillFor is the spill file of a call's output, named by its tool-call
// ID (or, with none, a fresh name).
func (b *bash) spillFor(w *workspace.Workspace, toolCallID string) *spill {
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
	return &spill{name: name, limit: b.opts.SpillLimit, open: func() (io.WriteCloser, error) {
		if err := w.Root().MkdirAll(spillDir, workspace.DirMode); err != nil {
			return nil, workspace.Friendly(spillDir, err)
		}
		f, err := w.Root().OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, workspace.FileMode)
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
