package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	research "github.com/agentree/agentree/agentsdk/tools/demo"
)

// probeCancels measures how soon a cancel request ends an execution whose
// model call is streaming (issue 33: within 1.5 s): after the faults, on
// the settled cluster, n one-shot executions are each cancelled as their
// first token arrives; a sample is the time from sending the request to
// the execution's status reading CANCELLED. The probes are not
// conversations: the invariants do not look at them.
func (d *driver) probeCancels(ctx context.Context, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n {
		took, err := d.probeCancel(ctx, i)
		if err != nil {
			return out, fmt.Errorf("chaos: cancel probe %d: %w", i, err)
		}
		out = append(out, took)
	}
	return out, nil
}

func (d *driver) probeCancel(ctx context.Context, i int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	body := map[string]any{
		"kind": "react-agent", "systemPrompt": research.SystemPrompt,
		"userPrompt": fmt.Sprintf("[%s-cancel%d] %s", d.runTag, i, questions[i%len(questions)]),
		"models":     []map[string]string{{"provider": "scripted", "modelId": "scripted-1"}},
		"tools":      []string{research.SearchNotesTool, research.FetchNoteTool, research.WordCountTool},
		"config":     map[string]any{"mode": "one-shot"}, "metadata": map[string]any{"chaos": "cancel-probe", "run": d.runTag},
	}
	var ex struct {
		ID string `json:"id"`
	}
	if _, err := d.api.do(ctx, "POST", "/agent-executions", fmt.Sprintf("chaos-%s-cancel%d", d.runTag, i), body, &ex); err != nil {
		return 0, err
	}
	f := newFollower(d.api, ex.ID)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go f.run(fctx)
	for f.seen(event.NameToken) == 0 {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return 0, fmt.Errorf("no token arrived: %w", err)
		}
	}
	asked := time.Now()
	path := "/agent-executions/" + url.PathEscape(ex.ID)
	if _, err := d.api.do(ctx, "DELETE", path, "", nil, nil); err != nil {
		return 0, err
	}
	for {
		var got struct {
			Status string `json:"status"`
		}
		if err := d.api.once(ctx, "GET", path, "", nil, &got); err != nil {
			return 0, err
		}
		if got.Status == "CANCELLED" {
			return time.Since(asked), nil
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return 0, fmt.Errorf("still %s: %w", got.Status, err)
		}
	}
}
