package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is a supervised child process: it runs in its own process group, so
// a kill reaches everything it started, and, like systemd or Kubernetes
// would, it is started again restartDelay after it exits, until stopped.
type proc struct {
	name         string
	path         string
	args, env    []string
	logPath      string
	restartDelay time.Duration

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd exits
	stopped bool
	starts  int
	wg      sync.WaitGroup
	// launched, when set, learns every start's pid and binary (a deploy
	// tells its builds apart by it).
	launched func(pid int, path string)
}

// start launches the process and its supervisor.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.launchLocked(); err != nil {
		return err
	}
	p.wg.Add(1)
	go p.supervise()
	return nil
}

func (p *proc) launchLocked() error {
	logf, err := os.OpenFile(p.logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: %s log: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: should this process die without stopping its children (a
	// test timing out), they die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("chaos: start %s: %w", p.name, err)
	}
	p.starts++
	if p.launched != nil {
		p.launched(cmd.Process.Pid, p.path)
	}
	fmt.Fprintf(logf, "--- chaos: %s started, pid %d (start %d) at %s\n", p.name, cmd.Process.Pid, p.starts, time.Now().Format(time.RFC3339Nano))
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		fmt.Fprintf(logf, "--- chaos: %s pid %d exited: %v\n", p.name, cmd.Process.Pid, cmd.ProcessState)
		logf.Close()
		close(exited)
	}()
	return nil
}

// supervise starts the process again whenever it exits, until stop.
func (p *proc) supervise() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		<-exited
		time.Sleep(p.restartDelay)
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		if err := p.launchLocked(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		p.mu.Unlock()
	}
}

// pid is the running process's ID, or 0.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.exited:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// kill SIGKILLs the process group and waits for the process to exit; the
// supervisor then starts it again. It returns the killed process's ID.
func (p *proc) kill() int {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return cmd.Process.Pid
}

// stop ends the process for good: SIGTERM to its group, then SIGKILL after
// grace.
func (p *proc) stop(grace time.Duration) {
	p.mu.Lock()
	p.stopped = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	p.wg.Wait()
}
