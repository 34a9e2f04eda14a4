package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured server's connection: a live session, or none
// while it is being reconnected in the background.
type server struct {
	cfg  Server
	opts Options
	log  *slog.Logger
	// label names the session in errors: the server, and the
	// organization whose credentials it holds, if any.
	label string
	// listed are the tools as listed at start, which the lister session
	// of a group (group.lister) offers until the server says its list
	// changed.
	listed []*sdk.Tool
	// onList, set on a group's lister, takes a new listing that followed
	// the server's notifications/tools/list_changed.
	onList func([]*sdk.Tool)

	mu      sync.Mutex
	session *sdk.ClientSession
	proc    *exec.Cmd // the stdio process of session
	since   time.Time // when session began
	lost    error     // why the last session ended, while there is none
	attempt int       // reconnection attempts since it ended
	delay   time.Duration
	closed  bool

	done  chan struct{} // closed by close: stops reconnecting
	loops sync.WaitGroup
}

func newServer(cfg Server, opts Options, org string) *server {
	s := &server{cfg: cfg, opts: opts, log: opts.Logger.With("mcpServer", cfg.Name), label: cfg.Name, done: make(chan struct{})}
	if org != "" {
		s.log, s.label = s.log.With("org", org), fmt.Sprintf("%s (the session of organization %s)", cfg.Name, org)
	}
	return s
}

// start makes the first connection and lists the tools to offer.
func (s *server) start(ctx context.Context) error {
	cs, proc, tools, err := s.dial(ctx)
	if err != nil {
		return fmt.Errorf("mcp: server %s: %w", s.label, err)
	}
	s.listed = tools
	if !s.use(cs, proc) {
		_ = cs.Close()
		killGroup(proc)
	}
	return nil
}

// dial connects and lists the server's tools, within its timeout.
func (s *server) dial(ctx context.Context) (*sdk.ClientSession, *exec.Cmd, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	t, proc := s.transport()
	client := sdk.NewClient(&sdk.Implementation{Name: "agentree", Version: "1"}, &sdk.ClientOptions{
		// The list is fetched apart from the handler: a request made
		// while the session's reader is busy here would never be answered.
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			s.loops.Go(func() { s.relist(req.Session) })
		},
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		killGroup(proc)
		return nil, nil, nil, fmt.Errorf("connect: %w", timedOut(ctx, err, s.cfg.Timeout))
	}
	var tools []*sdk.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			_ = cs.Close()
			killGroup(proc)
			return nil, nil, nil, fmt.Errorf("list tools: %w", timedOut(ctx, err, s.cfg.Timeout))
		}
		tools = append(tools, tool)
	}
	return cs, proc, tools, nil
}

// relist lists cs's tools again after the server said they changed, and
// hands the listing to onList.
func (s *server) relist(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	var tools []*sdk.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.log.Warn("MCP server says its tools changed, but listing them failed; the tools offered stay as they were", "error", err)
			return
		}
		tools = append(tools, tool)
	}
	s.mu.Lock()
	diff, onList := toolsDiff(s.listed, tools), s.onList
	s.listed = tools
	s.mu.Unlock()
	s.log.Info("MCP server's tools changed", "changes", diff)
	if onList != nil {
		onList(tools)
	}
}

// timedOut says so when err came from ctx's deadline.
func timedOut(ctx context.Context, err error, d time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", d, err)
	}
	return err
}

// use makes cs the live session and watches for its end; false when the
// server was closed meanwhile (cs is then the caller's to close).
func (s *server) use(cs *sdk.ClientSession, proc *exec.Cmd) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.session, s.proc, s.since, s.lost, s.attempt = cs, proc, time.Now(), nil, 0
	s.loops.Go(func() {
		err := cs.Wait()
		s.lose(cs, cmp.Or(err, sdk.ErrConnectionClosed))
	})
	return true
}

// lose retires cs, if it is still the live session, and reconnects in
// the background.
func (s *server) lose(cs *sdk.ClientSession, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs || s.closed {
		return
	}
	proc, lived := s.proc, time.Since(s.since)
	s.session, s.proc, s.lost = nil, nil, why
	if lived >= s.opts.MaxBackoff {
		s.delay = 0
	}
	s.log.Warn("MCP server stopped; reconnecting", "error", why)
	s.loops.Go(func() {
		_ = cs.Close()
		killGroup(proc)
		// Closing a stdio session waits for its process: how it ended
		// says more than the broken pipe did.
		if proc != nil && proc.ProcessState != nil {
			s.mu.Lock()
			s.lost = fmt.Errorf("its process ended: %s", proc.ProcessState)
			s.mu.Unlock()
		}
		s.reconnect()
	})
}

// reconnect dials until it succeeds or the server is closed, waiting
// twice as long after each failure.
func (s *server) reconnect() {
	for {
		s.mu.Lock()
		s.delay = min(max(2*s.delay, s.opts.MinBackoff), s.opts.MaxBackoff)
		s.attempt++
		delay := s.delay
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-time.After(delay):
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-s.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		cs, proc, tools, err := s.dial(ctx)
		cancel()
		if err != nil {
			s.mu.Lock()
			s.lost = err
			s.mu.Unlock()
			s.log.Warn("MCP server: reconnection failed", "error", err, "retryIn", min(2*delay, s.opts.MaxBackoff))
			continue
		}
		if !s.use(cs, proc) {
			_ = cs.Close()
			killGroup(proc)
			return
		}
		s.log.Info("MCP server reconnected")
		s.mu.Lock()
		listed := s.listed
		s.mu.Unlock()
		if diff := toolsDiff(listed, tools); diff != "" {
			s.log.Warn("MCP server's tools changed since the worker started; it still offers the tools listed then", "changes", diff)
		}
		return
	}
}

// OrgMeta is the key of the calling organization's ID in each
// tools/call request's _meta: a server that serves several tenants (a
// gateway to an API, say) can tell them apart.
const OrgMeta = "agentree/org"

// call runs the server's tool named tool for org.
func (s *server) call(ctx context.Context, org, tool string, args []byte) (string, error) {
	s.mu.Lock()
	cs, closed, lost, attempt := s.session, s.closed, s.lost, s.attempt
	s.mu.Unlock()
	switch {
	case closed:
		return "", fmt.Errorf("MCP server %s is shut down", s.cfg.Name)
	case cs == nil:
		return "", fmt.Errorf("MCP server %s is %w after it stopped (%v; reconnection attempt %d): try again shortly", s.cfg.Name, ErrRestarting, lost, attempt)
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Meta: sdk.Meta{OrgMeta: org}, Name: tool, Arguments: json.RawMessage(args)})
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return output(res)
	case ctx.Err() != nil:
		return "", ctx.Err()
	case cctx.Err() != nil:
		return "", fmt.Errorf("MCP server %s: %s did not answer within %s", s.cfg.Name, tool, s.cfg.Timeout)
	case errors.As(err, &rpcErr):
		return "", fmt.Errorf("MCP server %s: %s: %s", s.cfg.Name, tool, rpcErr.Message)
	default:
		s.lose(cs, err)
		return "", fmt.Errorf("MCP server %s stopped during the call (%v); it is being restarted", s.cfg.Name, err)
	}
}

// close ends the session and stops reconnecting.
func (s *server) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	cs, proc := s.session, s.proc
	s.session, s.proc = nil, nil
	close(s.done)
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	killGroup(proc)
	s.loops.Wait()
}
