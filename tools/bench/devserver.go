package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	aclient "github.com/agentree/agentree/adapter/client"
)

// devServer is a Temporal dev server the bench started with Temporal's
// default dynamic config: users' clusters do not carry the settings `make
// up` gives its server (eager activities, one task-queue partition, no
// workflowIdReuseMinimalInterval), so every scenario runs on this one too.
// Only the search attributes every agent workflow carries are registered,
// as any Agentree cluster must.
type devServer struct {
	cmd  *exec.Cmd
	addr string
	dir  string
	done chan struct{}
}

// startDevServer starts bin's dev server on a free port with a database
// file of its own, and waits until it answers.
func startDevServer(ctx context.Context, bin string) (*devServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentree-bench-temporal-")
	if err != nil {
		return nil, err
	}
	args := []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "warn"}
	for _, name := range aclient.SearchAttributeNames {
		args = append(args, "--search-attribute", name+"=Keyword")
	}
	logf, err := os.Create(filepath.Join(dir, "temporal.log"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	d := &devServer{cmd: exec.Command(bin, args...), addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("bench: start the default-config Temporal server (%s; -temporal or $AGENTREE_TEMPORAL_BIN): %w", bin, err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	if err := d.ready(ctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "temporal.log"))
		d.stop()
		return nil, fmt.Errorf("bench: the default-config Temporal server: %w\n%s", err, log)
	}
	return d, nil
}

// ready polls until the server serves the default namespace.
func (d *devServer) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := client.DialContext(ctx, client.Options{HostPort: d.addr, Logger: quietLogger()})
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx, describeDefault)
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready at %s: %w (last: %v)", d.addr, ctx.Err(), err)
		case <-d.done:
			return errors.New("it exited")
		case <-tick.C:
		}
	}
}

var describeDefault = &workflowservice.DescribeNamespaceRequest{Namespace: client.DefaultNamespace}

// stop ends the server and removes its files.
func (d *devServer) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	_ = os.RemoveAll(d.dir)
}

// freePort asks the kernel for a port no one listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
