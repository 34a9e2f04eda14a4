package demo

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// EnvToolDelay, a duration such as 500ms, makes every research tool take at
// least that long, honouring its context: the fault-injection suite
// (tools/chaos) slows the worker's tools so a kill can land while a tool
// call is in flight. A value that is not a duration is reported on stderr
// and ignored.
const EnvToolDelay = "AGENTREE_RESEARCH_TOOL_DELAY"

// toolDelay reads EnvToolDelay.
func toolDelay() time.Duration {
	v := strings.TrimSpace(os.Getenv(EnvToolDelay))
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		fmt.Fprintf(os.Stderr, "demo tools: %s=%q is not a duration (such as 500ms); ignored\n", EnvToolDelay, v)
		return 0
	}
	return d
}

// slowed makes each tool wait d before it runs.
func slowed(tools []*agentsdk.Tool, d time.Duration) []*agentsdk.Tool {
	if d <= 0 {
		return tools
	}
	for _, t := range tools {
		run := t.Run
		t.Run = func(ctx context.Context, call agentsdk.ToolInvocation) (string, error) {
			timer := time.NewTimer(d)
			defer timer.Stop()
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-timer.C:
			}
			return run(ctx, call)
		}
	}
	return tools
}
