package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C the commands wind down; a second one
		// kills the process the usual way.
		<-ctx.Done()
		stop()
	}()
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		// An error may quote the server (an execution's failure).
		fmt.Fprintln(os.Stderr, "agentree:", clean(explain(err)))
		os.Exit(exitCode(err))
	}
}
