package pebblekv

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/cespare/xxhash/v2"
)

const hotShards = 32

// hotCache is a sharded cache of values by key, bounded in bytes, and built
// for the collector: a shard keeps its entries in one ring of bytes and
// indexes them by the key's hash in a map of integers, so that millions of
// entries are a few large objects, none holding a pointer to mark. (Entries
// as objects of their own, in a list and a map of strings, made writing
// through a fifth of a create's apply.) Entries are written at the ring's
// head and die when it comes round; an entry read in the older half of the
// ring is written again at the head, so that what is read often stays.
// Values it returns are copies.
type hotCache struct {
	shards [hotShards]hotShard
}

type hotShard struct {
	mu    sync.Mutex
	index map[uint64]uint64 // key's hash → entry's position, in bytes ever written
	ring  []byte
	limit int    // the ring's full size
	head  uint64 // bytes ever written, padding included
	swept uint64 // head when the index last lost its dead entries
	// hits and misses count the lookups (getAppend) that found the key's
	// entry or did not, for the store's Stats.
	hits, misses uint64
}

// An entry is a header (key length, value length, missing), the key and the
// value.
const (
	hotHeader = 7
	hotMaxKey = 1<<16 - 1
	// hotFirstRing is where a shard's ring starts: it doubles each time it
	// fills, up to its limit, so that a store that caches little never
	// zeroes megabytes.
	hotFirstRing = 64 << 10
)

func newHotCache(limit int64) *hotCache {
	c := &hotCache{}
	for i := range c.shards {
		c.shards[i].index = map[uint64]uint64{}
		c.shards[i].limit = int(max(limit/hotShards, 0))
	}
	return c
}

func (c *hotCache) shard(key []byte) (*hotShard, uint64) {
	h := xxhash.Sum64(key)
	return &c.shards[h%hotShards], h
}

// get returns the cached state of key: cached reports whether the cache
// knows it, exists whether the key exists (then value is its value).
func (c *hotCache) get(key []byte) (value []byte, exists, cached bool) {
	return c.getAppend(nil, key)
}

// getAppend is get that appends the value to dst (nil: a new slice) and
// returns the result, or dst if the key is missing or not cached.
func (c *hotCache) getAppend(dst, key []byte) (value []byte, exists, cached bool) {
	s, h := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	pos, v, missing, ok := s.find(h, key)
	if !ok {
		s.misses++
		return dst, false, false
	}
	s.hits++
	value = appendTo(dst, v)
	if ring := uint64(len(s.ring)); pos+ring/2 < s.head {
		s.put(h, key, value[len(dst):], missing)
	}
	return value, !missing, true
}

// add caches a value of key, or that it is missing: what a read found in
// the store, or what a commit wrote there.
func (c *hotCache) add(key, value []byte, missing bool) {
	s, h := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(h, key, value, missing)
}

// refresh caches a value of key, or that it is missing, only if the cache
// holds the key already: what a commit wrote, kept exact without adding
// keys (Store.SetWriteThrough).
func (c *hotCache) refresh(key, value []byte, missing bool) {
	s, h := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, _, ok := s.find(h, key); ok {
		s.put(h, key, value, missing)
	}
}

// find returns the live entry of key, whose hash is h: its position, value
// and whether it records the key missing. An index entry that the ring
// overwrote since is dropped.
func (s *hotShard) find(h uint64, key []byte) (pos uint64, value []byte, missing, ok bool) {
	pos, ok = s.index[h]
	if !ok {
		return 0, nil, false, false
	}
	if !s.live(pos) {
		delete(s.index, h)
		return 0, nil, false, false
	}
	k, v, missing := entry(s.ring, pos)
	if !bytes.Equal(k, key) { // another key of the same hash
		return 0, nil, false, false
	}
	return pos, v, missing, true
}

// live reports whether the entry at pos was not overwritten yet.
func (s *hotShard) live(pos uint64) bool { return pos+uint64(len(s.ring)) >= s.head }

func entry(ring []byte, pos uint64) (key, value []byte, missing bool) {
	e := ring[pos%uint64(len(ring)):]
	kl, vl := int(binary.LittleEndian.Uint16(e)), int(binary.LittleEndian.Uint32(e[2:]))
	return e[hotHeader : hotHeader+kl], e[hotHeader+kl : hotHeader+kl+vl], e[6] != 0
}

// put writes an entry at the head, skipping to the ring's start if it does
// not fit before the end. An entry too large for a quarter of the full ring
// is not kept, nor any older one of its key.
func (s *hotShard) put(h uint64, key, value []byte, missing bool) {
	size := uint64(hotHeader + len(key) + len(value))
	if len(key) > hotMaxKey || size > uint64(s.limit)/4 {
		delete(s.index, h)
		return
	}
	for s.head+size > uint64(len(s.ring)) && len(s.ring) < s.limit {
		s.grow()
	}
	ring := uint64(len(s.ring))
	if off := s.head % ring; off+size > ring {
		s.head += ring - off
	}
	e := s.ring[s.head%ring:]
	binary.LittleEndian.PutUint16(e, uint16(len(key)))
	binary.LittleEndian.PutUint32(e[2:], uint32(len(value)))
	e[6] = 0
	if missing {
		e[6] = 1
	}
	copy(e[hotHeader:], key)
	copy(e[hotHeader+len(key):], value)
	s.index[h] = s.head
	s.head += size
	if s.head-s.swept >= ring { // once a round: the index forgets the dead
		for k, pos := range s.index {
			if !s.live(pos) {
				delete(s.index, k)
			}
		}
		s.swept = s.head
	}
}

// grow doubles the ring (up to its limit). A ring grows before it first
// comes round (see put), so its entries lie at their positions, which stay
// theirs in the larger ring: they move as one copy, and the index stays.
func (s *hotShard) grow() {
	old := s.ring
	s.ring = make([]byte, min(max(2*len(old), hotFirstRing), s.limit))
	copy(s.ring, old[:s.head])
}

// stats returns the lookups that hit and missed, and the bytes the rings
// hold, over all shards.
func (c *hotCache) stats() (hits, misses uint64, bytes int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		hits, misses, bytes = hits+s.hits, misses+s.misses, bytes+int64(min(s.head, uint64(len(s.ring))))
		s.mu.Unlock()
	}
	return hits, misses, bytes
}
