package pebblekv

import (
	"bytes"
	"errors"
	"slices"

	"github.com/stratafs/strata/internal/kv"
)

// GetMany implements kv.MultiGetter: the hot cache first, then the keys it
// lacks in key order through one iterator, which moves forward from one to
// the next where a Get builds a lookup through every level each time. What
// it reads from pebble is not cached: a listing of a million entries, each
// read once, would push out the records that are hot.
func (r reader) GetMany(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if r.writer {
		// The writer reads through its own iterator (seekGet), a Get each.
		return kv.GetMany(struct{ kv.Reader }{r}, keys, fn)
	}
	// Each key's value is arena[start:end].
	type value struct {
		start, end int
		ok         bool
	}
	vals := make([]value, len(keys))
	arena := make([]byte, 0, 128*len(keys))
	var misses []int
	for i, k := range keys {
		if !r.s.uncached(k) {
			start := len(arena)
			var exists, cached bool
			if arena, exists, cached = r.s.cache.getAppend(arena, k); cached {
				vals[i] = value{start, len(arena), exists}
				continue
			}
		}
		misses = append(misses, i)
	}
	if len(misses) > 0 {
		slices.SortFunc(misses, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
		it, err := r.s.db.NewIter(nil)
		if err != nil {
			return err
		}
		for _, i := range misses {
			start := len(arena)
			if it.SeekGE(keys[i]) && bytes.Equal(it.Key(), keys[i]) {
				v, err := it.ValueAndErr()
				if err != nil {
					return errors.Join(err, it.Close())
				}
				arena = append(arena, v...)
				vals[i] = value{start, len(arena), true}
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return err
		}
	}
	for i, v := range vals {
		if err := fn(i, arena[v.start:v.end], v.ok); err != nil {
			return err
		}
	}
	return nil
}
