package gateway

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/entrystore"
)

// fetchLimit is how many events one table read returns.
const fetchLimit = 500

// subscriberBuffer is how many batches a subscriber may fall behind
// before the hub stops queueing for it and it reads the table itself.
const subscriberBuffer = 64

// hub follows agent_stream_event for the whole process over ONE dedicated
// LISTEN connection. A notification ("<execution>:<id>") makes the hub read
// the new rows of that execution once and hand the batch to every
// subscriber of it without blocking: a subscriber whose buffer is full is
// marked lagged and reads the table from its own last ID instead, so a slow
// client costs itself a query, never anyone an event. After every (re)LISTEN
// all subscribers re-read the table, which covers notifications sent while
// the connection was down.
type hub struct {
	es      *entrystore.Store
	log     *slog.Logger
	connect func(context.Context) (*pgx.Conn, error)
	backoff time.Duration
	// pingEvery is how long the listener waits for a notification before
	// it checks the connection: a link that died without a word would
	// otherwise go unnoticed until TCP keepalive gives up.
	pingEvery time.Duration

	mu     sync.Mutex
	topics map[string]*topic // by execution ID

	// listening is closed once the first LISTEN has succeeded (for tests
	// and benchmarks that want the hub warm).
	listening chan struct{}
	once      sync.Once
}

// topic is one execution's subscribers and the last event the hub read.
type topic struct {
	org    string
	cursor int64 // 0 = not read yet
	subs   map[*subscriber]struct{}
}

// subscriber is one stream's inbox.
type subscriber struct {
	batches chan []entrystore.StreamEvent
	wake    chan struct{}
	lagged  atomic.Bool
}

func newHub(es *entrystore.Store, log *slog.Logger) *hub {
	cfg := es.Pool().Config().ConnConfig
	return &hub{
		es: es, log: log, backoff: 500 * time.Millisecond, pingEvery: 30 * time.Second,
		connect: func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, cfg.Copy())
		},
		topics:    map[string]*topic{},
		listening: make(chan struct{}),
	}
}

// subscribe registers a subscriber to an execution's events. Register
// before reading the table, so nothing committed in between is missed.
func (h *hub) subscribe(org, exec string) *subscriber {
	s := &subscriber{batches: make(chan []entrystore.StreamEvent, subscriberBuffer), wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[exec]
	if t == nil {
		t = &topic{org: org, subs: map[*subscriber]struct{}{}}
		h.topics[exec] = t
	}
	t.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(exec string, s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[exec]; t != nil {
		delete(t.subs, s)
		if len(t.subs) == 0 {
			delete(h.topics, exec)
		}
	}
}

// lag tells a subscriber to read the table itself.
func (s *subscriber) lag() {
	s.lagged.Store(true)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// resync makes every subscriber re-read the table and forgets the topics'
// cursors: after a (re)LISTEN, nothing sent before it can be trusted to
// have arrived.
func (h *hub) resync() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		t.cursor = 0
		for s := range t.subs {
			s.lag()
		}
	}
}

// run listens until ctx ends, reconnecting after any failure.
func (h *hub) run(ctx context.Context) {
	for ctx.Err() == nil {
		err := h.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("gateway: stream listener lost; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.backoff):
		}
	}
}

// listen holds one LISTEN connection until it fails.
func (h *hub) listen(ctx context.Context) error {
	conn, err := h.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := entrystore.ListenStream(ctx, conn); err != nil {
		return err
	}
	h.resync()
	h.once.Do(func() { close(h.listening) })
	for {
		wctx, cancel := context.WithTimeout(ctx, h.pingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			// Quiet for a while: make sure the connection still answers.
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = conn.Exec(pctx, "SELECT 1")
			cancel()
			if err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		exec, id, ok := entrystore.ParseStreamNotification(n.Payload)
		if !ok {
			h.log.Warn("gateway: malformed stream notification", "payload", n.Payload)
			continue
		}
		h.deliver(ctx, exec, id)
	}
}

// deliver reads an execution's new events once and fans them out.
func (h *hub) deliver(ctx context.Context, exec string, id int64) {
	h.mu.Lock()
	t := h.topics[exec]
	if t == nil || id <= t.cursor {
		h.mu.Unlock()
		return
	}
	org, after := t.org, t.cursor
	if after == 0 {
		// Events of one execution commit in ID order, and a batch's one
		// notification names its first ID, so the first event the hub has
		// not read is at most the notified one; subscribers read anything
		// older from the table themselves.
		after = id - 1
	}
	h.mu.Unlock()

	var batch []entrystore.StreamEvent
	for {
		evs, err := h.es.StreamEventsAfter(ctx, org, exec, after, fetchLimit)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				h.log.Warn("gateway: read stream events", "execution", exec, "err", err)
			}
			h.lagAll(exec)
			return
		}
		batch = append(batch, evs...)
		if len(evs) < fetchLimit {
			break
		}
		after = evs[len(evs)-1].ID
	}
	if len(batch) == 0 {
		return
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	t = h.topics[exec]
	if t == nil {
		return
	}
	t.cursor = max(t.cursor, batch[len(batch)-1].ID)
	for s := range t.subs {
		select {
		case s.batches <- batch:
		default:
			s.lag()
		}
	}
}

func (h *hub) lagAll(exec string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[exec]; t != nil {
		for s := range t.subs {
			s.lag()
		}
	}
}
