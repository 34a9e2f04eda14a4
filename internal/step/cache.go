package step

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/agentree/agentree/agentsdk"
)

// PathAfterer is a Store that can read the part of a path below a depth:
// what a Cache loads for a call whose leaf extends the one it holds.
type PathAfterer interface {
	// PathAfter returns the entries on the path to leafID, an entry of
	// executionID, deeper than afterDepth, root-most first. complete is
	// false when it did not read all of them: the caller reads the path
	// whole instead.
	PathAfter(ctx context.Context, orgID, executionID, leafID string, afterDepth int) (entries []agentsdk.Entry, complete bool, err error)
}

// DefaultCacheBytes is a Cache's default size: about this many bytes of
// entry content, held decoded and raw.
const DefaultCacheBytes = 64 << 20

// Cache keeps, per execution, what each of its model calls reads and
// nothing changes: the frozen configuration, and the context path to the
// leaf the last call read, with its entries' tokens counted. Entries are
// immutable, so the next call — whose leaf extends that one by the
// answer, the tool results, a user message — loads only the entries after
// it (PathAfterer: one index range, however long the conversation).
// Without the cache every call loaded the whole context: at call 900 of a
// conversation that was 45-70 ms of the call, against ~15 ms at call 9.
// A short context's messages are decoded from the held entries at each
// call, not held decoded as well; a long one's are held (View.held). A
// worker that has not seen the execution (a restart, another machine, an
// eviction) reads the path whole, once. Executions are evicted least recently used
// first when the cache holds more than its size.
//
// A Cache is safe for concurrent use.
type Cache struct {
	max int64

	mu   sync.Mutex
	size int64
	lru  *list.List // of *cached, most recently used in front
	byID map[string]*list.Element
}

// cached is one execution's record.
type cached struct {
	org, execution string
	cfg            *agentsdk.Config
	// path is the context path to its last entry, the leaf last read,
	// and view its view. When every entry of path from index viewFrom on
	// is in the view (shared), as on a path no compaction cut, the view's
	// Entries are that part of path itself, not a copy: each entry is
	// held once.
	path     []agentsdk.Entry
	view     View
	viewFrom int
	shared   bool
	size     int64
}

// NewCache returns a cache holding about maxBytes of entries; <= 0 is
// DefaultCacheBytes.
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{max: maxBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// record returns the execution's record, made most recently used; nil if
// there is none (or it is another organization's: IDs are the caller's
// word until a store read checks them).
func (c *Cache) record(org, execution string) *cached {
	el, ok := c.byID[execution]
	if !ok {
		return nil
	}
	rec := el.Value.(*cached)
	if rec.org != org {
		return nil
	}
	c.lru.MoveToFront(el)
	return rec
}

// put makes rec the execution's record and evicts past the size.
func (c *Cache) put(rec *cached) {
	if el, ok := c.byID[rec.execution]; ok {
		c.size -= el.Value.(*cached).size
		el.Value = rec
		c.lru.MoveToFront(el)
	} else {
		c.byID[rec.execution] = c.lru.PushFront(rec)
	}
	c.size += rec.size
	for c.size > c.max && c.lru.Len() > 1 {
		el := c.lru.Back()
		old := el.Value.(*cached)
		c.lru.Remove(el)
		delete(c.byID, old.execution)
		c.size -= old.size
	}
}

// config returns the execution's configuration, read once.
func (c *Cache) config(ctx context.Context, s Store, org, execution string) (agentsdk.Config, error) {
	c.mu.Lock()
	if rec := c.record(org, execution); rec != nil && rec.cfg != nil {
		cfg := *rec.cfg
		c.mu.Unlock()
		return cfg, nil
	}
	c.mu.Unlock()
	cfg, err := s.ExecutionConfig(ctx, org, execution)
	if err != nil {
		return cfg, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.record(org, execution)
	if rec == nil {
		rec = &cached{org: org, execution: execution}
		c.put(rec)
	}
	rec.cfg = &cfg
	return cfg, nil
}

// View returns the view of the context path to leaf, an entry of the
// execution, and that path (from the latest compaction's boundary),
// loading only what the cache does not hold: what a model call of the
// execution at leaf sends.
func (c *Cache) View(ctx context.Context, s Store, org, execution, leaf string) (View, []agentsdk.Entry, error) {
	c.mu.Lock()
	var base []agentsdk.Entry
	if rec := c.record(org, execution); rec != nil {
		base = rec.path
		if n := len(base); n > 0 && base[n-1].ID == leaf {
			v, path := rec.view.clipped(), slices.Clip(base)
			c.mu.Unlock()
			return v, path, nil
		}
	}
	c.mu.Unlock()
	more, fresh, err := c.load(ctx, s, org, execution, leaf, base)
	if err != nil {
		return View{}, nil, err
	}
	tokens := tokensOf(more)
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.record(org, execution)
	var cfg *agentsdk.Config
	if rec != nil {
		cfg = rec.cfg
	}
	var next *cached
	if !fresh && rec != nil && len(rec.path) == len(base) && rec.path[len(base)-1].ID == base[len(base)-1].ID {
		next, err = grown(rec, more, tokens)
	} else {
		// A fresh read, or a record that changed meanwhile: built anew.
		if !fresh {
			more = append(slices.Clip(base), more...)
		}
		next, err = grown(&cached{org: org, execution: execution, cfg: cfg}, more, tokens)
	}
	if err != nil {
		return View{}, nil, err
	}
	c.put(next)
	return next.view.clipped(), slices.Clip(next.path), nil
}

// grown is rec extended by more, entries that continue its path, with
// their tokens (index by index), as the execution's new record. Past the
// latest compaction's boundary nothing before it is sent again: the
// record keeps the path from there.
//
// Its slices grow in place where they have room, so a long path is not
// copied at every step. That is safe because only the execution's
// current record is ever grown, under c.mu, and every slice of a record
// handed out is clipped: nobody else sees, or writes, past its length.
func grown(rec *cached, more []agentsdk.Entry, tokens []int) (*cached, error) {
	out := &cached{org: rec.org, execution: rec.execution, cfg: rec.cfg,
		path: append(rec.path, more...), size: rec.size + sizeOf(more)}
	interned(out.path, len(rec.path), rec.execution)
	if len(rec.path) > 0 && !slices.ContainsFunc(more, func(e agentsdk.Entry) bool { return e.Type == agentsdk.EntryCompaction }) {
		v := rec.view
		if rec.shared && !slices.ContainsFunc(more, func(e agentsdk.Entry) bool { return !e.InContext() }) {
			v.Entries = out.path[rec.viewFrom:]
			for _, n := range tokens {
				v.tokens += n
			}
			out.viewFrom, out.shared = rec.viewFrom, true
			var err error
			out.view, err = v.held()
			return out, err
		}
		from := 0
		if v.Compaction != nil {
			from = v.Record.FirstKeptDepth
		}
		if rec.shared {
			// Entries shared with the path are copied before they grow
			// apart from it.
			v.Entries = slices.Clip(v.Entries)
		}
		var err error
		out.view, err = v.extended(more, tokens, from).held()
		return out, err
	}
	// A new record, or a compaction: the view is made over the whole
	// path, whose older entries' tokens are counted again.
	all := tokens
	if n := len(out.path) - len(tokens); n > 0 {
		all = append(tokensOf(out.path[:n]), tokens...)
	}
	v, err := viewWith(out.path, all)
	if err != nil {
		return nil, err
	}
	if from := boundary(v, out.path); from > 0 {
		// A new record: the kept part copied, so the view's compaction
		// points into it.
		path := slices.Clone(out.path[from:])
		out.path, out.size = path, sizeOf(path)
		if v, err = viewWith(out.path, all[from:]); err != nil {
			return nil, err
		}
	}
	out.view = v
	out.viewFrom, out.shared = sharedFrom(v, out.path)
	if out.shared {
		out.view.Entries = out.path[out.viewFrom:]
	}
	out.view, err = out.view.held()
	return out, err
}

// sharedFrom is the index in path from which every entry is one of v's
// Entries, in order, and whether there is one: the view can then hold
// that part of path rather than a copy.
func sharedFrom(v View, path []agentsdk.Entry) (int, bool) {
	from := len(path) - len(v.Entries)
	if from < 0 {
		return 0, false
	}
	for i, e := range v.Entries {
		if path[from+i].ID != e.ID {
			return 0, false
		}
	}
	return from, true
}

// interned makes the entries of path from index from hold the strings
// every entry of the path shares — its execution's ID, its parent's ID —
// rather than copies of them, one per entry read.
func interned(path []agentsdk.Entry, from int, execution string) {
	for i := from; i < len(path); i++ {
		if path[i].ExecutionID == execution {
			path[i].ExecutionID = execution
		}
		if i > 0 && path[i].ParentID == path[i-1].ID {
			path[i].ParentID = path[i-1].ID
		}
	}
}

// load reads the entries after base on the path to leaf when leaf
// extends it; else (fresh) the whole context path.
func (c *Cache) load(ctx context.Context, s Store, org, execution, leaf string, base []agentsdk.Entry) (more []agentsdk.Entry, fresh bool, err error) {
	if pa, ok := s.(PathAfterer); ok && len(base) > 0 {
		last := base[len(base)-1]
		more, complete, err := pa.PathAfter(ctx, org, execution, leaf, last.Depth)
		if err != nil {
			return nil, false, fmt.Errorf("step: model call: path: %w", err)
		}
		if complete && extends(last, more) {
			return more, false, nil
		}
	}
	path, err := s.ContextPath(ctx, org, leaf)
	if err != nil {
		return nil, true, fmt.Errorf("step: model call: path: %w", err)
	}
	return path, true, nil
}

// extends reports whether more continues the path at last: its entries
// are last's child, grandchild and so on. A leaf on another branch (a
// fork above last) fails it.
func extends(last agentsdk.Entry, more []agentsdk.Entry) bool {
	if len(more) == 0 {
		return false
	}
	prev := last
	for _, e := range more {
		if e.ParentID != prev.ID || e.Depth != prev.Depth+1 {
			return false
		}
		prev = e
	}
	return true
}

// boundary is the index in path of the view's first kept entry: where a
// compaction on path cut the context (0 when none did).
func boundary(v View, path []agentsdk.Entry) int {
	if v.Compaction == nil {
		return 0
	}
	for i, e := range path {
		if e.Depth >= v.Record.FirstKeptDepth {
			return i
		}
	}
	return 0
}

// tokensOf counts entries' tokens, index by index.
func tokensOf(entries []agentsdk.Entry) []int {
	n := make([]int, len(entries))
	for i, e := range entries {
		n[i] = e.Tokens()
	}
	return n
}

// sizeOf estimates what a record of path holds: each entry's bytes, raw
// and decoded, and their headers.
func sizeOf(path []agentsdk.Entry) int64 {
	var n int64
	for _, e := range path {
		n += 2*int64(len(e.Content)) + int64(len(e.Metadata)) + 512
	}
	return n
}

// Appended adds entries just appended under the execution's cached leaf
// (a step's: the answer under the context it read, a tool's result under
// the answer; or the engine's: a consumed user message,
// engine.Ops.Appended) to its record, so the next model call finds them
// without a read. Entries under anything else are left to the next read.
func (c *Cache) Appended(org, execution string, entries []agentsdk.Entry) {
	if len(entries) == 0 {
		return
	}
	tokens := tokensOf(entries)
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.record(org, execution)
	if rec == nil || len(rec.path) == 0 || !extends(rec.path[len(rec.path)-1], entries) {
		return
	}
	if next, err := grown(rec, entries, tokens); err == nil {
		c.put(next)
	}
}

// entry returns the execution's entry id if its cached path holds it.
func (c *Cache) entry(org, execution, id string) (agentsdk.Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.record(org, execution)
	if rec == nil {
		return agentsdk.Entry{}, false
	}
	for i := len(rec.path) - 1; i >= 0; i-- {
		if rec.path[i].ID == id {
			return rec.path[i], true
		}
	}
	return agentsdk.Entry{}, false
}
