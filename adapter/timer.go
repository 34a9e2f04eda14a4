package adapter

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
)

// AwaitUntil waits for a signal or a Temporal timer that fires at at,
// whichever comes first. While it waits the run has no workflow task: the
// server holds the timer, so a worker restart loses nothing and a run that
// continues as new into a wait re-arms the timer from SegmentInput.WakeAt.
// A signal that ends the select cancels the timer (the engine asks again
// if the signal does not end its wait): a timer left behind would wake the
// run for nothing later.
func (p *temporalPort) AwaitUntil(at time.Time) (agentsdk.Signal, bool, bool) {
	var s agentsdk.Signal
	d := at.Sub(workflow.Now(p.ctx))
	if d <= 0 {
		return s, true, true
	}
	p.showRunning()
	tctx, cancel := workflow.WithCancel(p.ctx)
	timer := workflow.NewTimer(tctx, d)
	got, fired := false, false
	sel := workflow.NewSelector(p.ctx)
	sel.AddReceive(p.sigCh, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(p.ctx, &s)
		got = true
	})
	sel.AddFuture(timer, func(workflow.Future) { fired = true })
	sel.AddReceive(p.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(p.ctx)
	if !fired {
		cancel()
	}
	if p.ctx.Err() != nil {
		return s, false, false
	}
	return s, fired && !got, true
}
