package step

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// PublishOptions tune how a model call's deltas reach the stream. Zero
// values are the defaults.
type PublishOptions struct {
	// Every is the longest a delta waits before its batch is written;
	// default 50 ms, well inside the 100 ms a client may wait for a token.
	Every time.Duration
	// Size is how many waiting deltas are written at once without waiting
	// for Every; default 64.
	Size int
	// Limit is how many deltas may wait while the store is behind;
	// default 64. Past it, a delta is merged into the one before it when
	// they are of one kind (see publisher.add), so the buffer never makes
	// the provider wait and never drops text. It also bounds a write's
	// rows, hence its time: a model streaming flat out is written in a few
	// small writes of merged text, each token reaching a client within
	// tens of milliseconds, rather than in one write of a thousand rows
	// that holds them all back.
	Limit int
	// FlushTimeout bounds writing what is left once the call ended,
	// cancelled or not; default 5 s.
	FlushTimeout time.Duration
}

func (o PublishOptions) withDefaults() PublishOptions {
	if o.Every <= 0 {
		o.Every = 50 * time.Millisecond
	}
	if o.Size <= 0 {
		o.Size = 64
	}
	if o.Limit <= 0 {
		o.Limit = 64
	}
	if o.Limit < o.Size {
		o.Limit = o.Size
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 5 * time.Second
	}
	return o
}

// publisher forwards a model's deltas to the execution's stream without
// ever making the provider's callback wait for the database: onEvent
// queues, and one writer goroutine writes the queue in batches (one
// Store.PublishBatch per batch, in order) every Every or Size deltas,
// whichever comes first. close writes what is left, even after the call
// was cancelled, so a call's deltas are all stored before the step
// returns and anything published after it.
//
// Live events are best effort: a failed write never fails the step (the
// entries are the record); the first failure is kept for the caller.
type publisher struct {
	store     Store
	org, exec string
	task      string
	opts      PublishOptions

	mu      sync.Mutex
	pending []event.Event
	since   time.Time // when the oldest pending delta arrived
	closing bool
	// handOff: the writer stops without writing what is left, which
	// detach hands to the caller.
	handOff bool
	failure error
	// merged counts deltas merged into the one before them.
	merged int
	// text is how many bytes of text the call has streamed so far: the
	// next token's Offset.
	text int

	wake  chan struct{} // deltas arrived, or close was called
	done  chan struct{} // the writer has finished
	abort context.CancelFunc
}

// newPublisher publishes the deltas of the model call task (its
// idempotency key, which every retry of the call shares). Writes outlive
// ctx's cancellation, so close can store what a cancelled call streamed;
// close bounds them.
func newPublisher(ctx context.Context, s Store, org, exec, task string, o PublishOptions) *publisher {
	wctx, abort := context.WithCancel(context.WithoutCancel(ctx))
	p := &publisher{
		store: s, org: org, exec: exec, task: task, opts: o.withDefaults(),
		wake: make(chan struct{}, 1), done: make(chan struct{}), abort: abort,
	}
	go p.run(wctx)
	return p
}

// onEvent is the provider's callback: it only queues.
func (p *publisher) onEvent(ev agentsdk.StreamEvent) {
	p.mu.Lock()
	var e event.Event
	if ev.Type == agentsdk.StreamText {
		e = event.Token{AgentExecutionID: p.exec, TaskExecutionID: p.task, Data: ev.Text, Offset: p.text}
		p.text += len(ev.Text)
	} else {
		e = event.Data{AgentExecutionID: p.exec, TaskExecutionID: p.task, Data: deltaPayload(ev)}
	}
	n := p.add(e)
	p.mu.Unlock()
	if n == 1 || n >= p.opts.Size {
		p.signal()
	}
}

// add queues e and returns how many deltas wait. When Limit are waiting
// already, e is merged into the last one if both are text of this call,
// thinking text, or argument fragments of one tool call: what a client
// reads is the same text, in fewer events. Anything else (a tool call's
// start or end) is queued past the limit; there are at most a few per
// tool call, so the queue stays bounded by Limit plus the answer's
// structure, not its length.
func (p *publisher) add(e event.Event) int {
	if p.closing {
		// The call has returned: nothing streams after that.
		return len(p.pending)
	}
	if n := len(p.pending); n >= p.opts.Limit {
		if m, ok := merge(p.pending[n-1], e); ok {
			p.pending[n-1] = m
			p.merged++
			return n
		}
	}
	if len(p.pending) == 0 {
		p.since = time.Now()
	}
	p.pending = append(p.pending, e)
	return len(p.pending)
}

// merge joins b onto a when they are adjacent deltas of one kind.
func merge(a, b event.Event) (event.Event, bool) {
	switch x := a.(type) {
	case event.Token:
		if y, ok := b.(event.Token); ok && x.TaskExecutionID == y.TaskExecutionID {
			x.Data += y.Data
			return x, true
		}
	case event.Data:
		y, ok := b.(event.Data)
		if !ok || x.TaskExecutionID != y.TaskExecutionID || x.Data.Type != y.Data.Type {
			return nil, false
		}
		switch x.Data.Type {
		case event.TypeThinkingDelta:
			x.Data.Text += y.Data.Text
			return x, true
		case event.TypeToolCallDelta:
			if x.Data.ToolCall != nil && y.Data.ToolCall != nil && x.Data.ToolCall.ID == y.Data.ToolCall.ID {
				x.Data.Delta += y.Data.Delta
				return x, true
			}
		}
	}
	return nil, false
}

func (p *publisher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run is the writer: it writes a batch when Size deltas wait, when the
// oldest has waited Every, or at once when closing, until closed and
// empty.
func (p *publisher) run(ctx context.Context) {
	defer close(p.done)
	timer := time.NewTimer(p.opts.Every)
	timer.Stop()
	defer timer.Stop()
	// The call's first delta is written the moment it arrives: the time
	// to the first token is what a person watching feels, and batching it
	// added up to Every to it. Later deltas batch.
	first := true
	for {
		p.mu.Lock()
		n, since, closing, handOff := len(p.pending), p.since, p.closing, p.handOff
		p.mu.Unlock()
		if handOff || n == 0 && closing {
			return
		}
		due := since.Add(p.opts.Every)
		if n > 0 && (first || closing || n >= p.opts.Size || !time.Now().Before(due)) {
			first = false
			p.write(ctx)
			continue
		}
		var tick <-chan time.Time
		if n > 0 {
			timer.Reset(time.Until(due))
			tick = timer.C
		}
		select {
		case <-p.wake:
		case <-tick:
		case <-ctx.Done():
			return
		}
	}
}

// write publishes everything pending as one batch.
func (p *publisher) write(ctx context.Context) {
	p.mu.Lock()
	batch := p.pending
	p.pending = nil
	p.mu.Unlock()
	if err := p.store.PublishBatch(ctx, p.org, p.exec, batch); err != nil {
		p.mu.Lock()
		if p.failure == nil {
			p.failure = fmt.Errorf("step: publish %d deltas: %w", len(batch), err)
		}
		p.mu.Unlock()
	}
}

// close writes what is still queued and stops the writer. It returns once
// everything is written, or after FlushTimeout, cancelling the write in
// flight; it returns the first failed write's error, if any.
func (p *publisher) close() error {
	p.stop(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failure == nil && len(p.pending) > 0 {
		p.failure = fmt.Errorf("step: publish: %d deltas not written within %s", len(p.pending), p.opts.FlushTimeout)
	}
	return p.failure
}

// detach stops the writer once a write in flight is done, without
// writing what is still queued, and returns that: the caller stores it
// with the call's answer, one commit for both (Announcer). It returns the
// first failed write's error too, if any.
func (p *publisher) detach() ([]event.Event, error) {
	p.stop(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	rest := p.pending
	p.pending = nil
	return rest, p.failure
}

// stop ends the writer, which first writes what is queued unless handOff,
// and waits for it up to FlushTimeout; past that it cancels the write in
// flight.
func (p *publisher) stop(handOff bool) {
	p.mu.Lock()
	p.closing, p.handOff = true, handOff
	p.mu.Unlock()
	p.signal()
	t := time.NewTimer(p.opts.FlushTimeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.abort()
		<-p.done
	}
	p.abort()
}

// deltaPayload is a model's non-text delta as a data event's payload.
func deltaPayload(ev agentsdk.StreamEvent) event.Payload {
	p := event.Payload{Type: string(ev.Type), Text: ev.Text, Delta: ev.Delta}
	if ev.ToolCall != nil {
		p.ToolCall = &event.ToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Arguments: ev.ToolCall.Arguments}
	}
	return p
}

// normaliseToolCallIDs gives every tool call of msg a non-empty ID that is
// unique within the message; providers' own IDs are kept when they are.
func normaliseToolCallIDs(msg *agentsdk.Message, key string) {
	seen := map[string]bool{}
	for i := range msg.Content {
		tc := msg.Content[i].ToolCall
		if msg.Content[i].Type != agentsdk.BlockToolCall || tc == nil {
			continue
		}
		if tc.ID == "" || seen[tc.ID] {
			tc.ID = fmt.Sprintf("call_%s_%d", shortHash(key), i)
		}
		if len(tc.Arguments) == 0 {
			tc.Arguments = []byte(`{}`)
		}
		seen[tc.ID] = true
	}
}

func shortHash(s string) string {
	return digest(agentsdk.ToolCall{Name: s})[:8]
}
