package gateway

import (
	"container/list"
	"sync"
	"time"
)

// lru is a bounded map whose least recently used entry goes first when it
// is full, and whose entries expire ttl after they were put (ttl 0: never).
// The gateway keeps everything a stranger can make it remember in one —
// key lookups, rate limiters — so no flood of distinct keys or addresses
// grows its memory.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	cap   int
	ttl   time.Duration
	order *list.List // front: most recently used
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key     K
	val     V
	expires time.Time
}

func newLRU[K comparable, V any](capacity int, ttl time.Duration) *lru[K, V] {
	return &lru[K, V]{cap: max(capacity, 1), ttl: ttl, order: list.New(), items: make(map[K]*list.Element)}
}

// get returns k's value unless it is absent or expired.
func (c *lru[K, V]) get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.items[k]
	if !ok {
		return zero, false
	}
	e := el.Value.(*lruEntry[K, V])
	if c.ttl > 0 && !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

// put stores v under k, evicting the least recently used entry if full.
func (c *lru[K, V]) put(k K, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v, now)
}

func (c *lru[K, V]) putLocked(k K, v V, now time.Time) {
	if el, ok := c.items[k]; ok {
		e := el.Value.(*lruEntry[K, V])
		e.val, e.expires = v, now.Add(c.ttl)
		c.order.MoveToFront(el)
		return
	}
	if c.order.Len() >= c.cap {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry[K, V]).key)
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v, expires: now.Add(c.ttl)})
}

// getOrPut returns k's value, first storing mk() under it if absent or
// expired: one lock for the lookup and the insert.
func (c *lru[K, V]) getOrPut(k K, now time.Time, mk func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		e := el.Value.(*lruEntry[K, V])
		if c.ttl == 0 || now.Before(e.expires) {
			c.order.MoveToFront(el)
			return e.val
		}
	}
	v := mk()
	c.putLocked(k, v, now)
	return v
}

// removeIf drops every entry whose value drop reports.
func (c *lru[K, V]) removeIf(drop func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.items {
		if drop(el.Value.(*lruEntry[K, V]).val) {
			c.order.Remove(el)
			delete(c.items, k)
		}
	}
}

// len is the number of entries held, expired ones included.
func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
