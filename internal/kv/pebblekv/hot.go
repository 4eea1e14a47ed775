package pebblekv

import (
	"container/list"
	"sync"

	"github.com/cespare/xxhash/v2"
)

const hotShards = 32

// hotCache is a sharded LRU of values by key, bounded in bytes. Values are
// never modified after insertion.
type hotCache struct {
	shards [hotShards]hotShard
}

type hotShard struct {
	mu struct {
		sync.Mutex
		items map[string]*list.Element
		order *list.List // front = most recently used
		bytes int64
	}
	limit int64
}

type hotItem struct {
	key     string
	value   []byte
	missing bool // the key is known not to exist
}

func newHotCache(limit int64) *hotCache {
	c := &hotCache{}
	for i := range c.shards {
		s := &c.shards[i]
		s.limit = limit / hotShards
		s.mu.items = map[string]*list.Element{}
		s.mu.order = list.New()
	}
	return c
}

func (c *hotCache) shard(key []byte) *hotShard {
	return &c.shards[xxhash.Sum64(key)%hotShards]
}

// get returns the cached state of key: cached reports whether the cache
// knows it, exists whether the key exists (then value is its value).
func (c *hotCache) get(key []byte) (value []byte, exists, cached bool) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.mu.items[string(key)]
	if !ok {
		return nil, false, false
	}
	s.mu.order.MoveToFront(e)
	it := e.Value.(*hotItem)
	return it.value, !it.missing, true
}

// add caches what a read found in the store: a value, or that the key is
// missing.
func (c *hotCache) add(key, value []byte, missing bool) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(string(key), value, missing)
}

// update reflects a committed write: in place in the entry of a key the
// cache holds, as a new entry otherwise (write-through: what was just
// written is likely read next, a stat after a create). NB: the new entries
// are a fifth of a create's apply (a map of millions, objects for the
// collector to mark); leaving them to the first read cut the apply by as
// much, but halved the stats/s of files just created.
func (c *hotCache) update(key, value []byte, deleted bool) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.mu.items[string(key)]
	if !ok {
		s.putLocked(string(key), value, deleted)
		return
	}
	old := e.Value.(*hotItem)
	s.mu.bytes += itemSize(old.key, value) - itemSize(old.key, old.value)
	e.Value = &hotItem{key: old.key, value: value, missing: deleted} // readers may hold old's value
	s.mu.order.MoveToFront(e)
	for s.mu.bytes > s.limit {
		s.removeLocked(s.mu.order.Back())
	}
}

func (s *hotShard) putLocked(key string, value []byte, missing bool) {
	if e, ok := s.mu.items[key]; ok {
		s.removeLocked(e)
	}
	size := itemSize(key, value)
	if size > s.limit {
		return
	}
	s.mu.items[key] = s.mu.order.PushFront(&hotItem{key: key, value: value, missing: missing})
	s.mu.bytes += size
	for s.mu.bytes > s.limit {
		s.removeLocked(s.mu.order.Back())
	}
}

func (s *hotShard) removeLocked(e *list.Element) {
	it := e.Value.(*hotItem)
	s.mu.order.Remove(e)
	delete(s.mu.items, it.key)
	s.mu.bytes -= itemSize(it.key, it.value)
}

// itemSize approximates an entry's memory, bookkeeping included.
func itemSize(key string, value []byte) int64 { return int64(len(key)+len(value)) + 96 }
