package kv

import (
	"unsafe"

	"github.com/google/btree"
)

// Overlay buffers writes over a base Reader. Reads see the buffered writes
// first; nothing reaches the base until the owner drains the overlay with
// Each. The apply path uses one Overlay per batch of commands (written to
// the store in one atomic batch), with a mark before each command that it
// rolls back to when the command fails, so a failed command changes nothing.
//
// The keys are kept in order too, for scans: a scan of a few keys among
// thousands of buffered writes (a member's unsynced hflushes, metaserver's
// pending) is a search, where sorting them all took longer than the rest
// of an hflush's apply.
type Overlay struct {
	base   Reader
	writes map[string][]byte     // nil: deleted (a value set is never nil)
	order  *btree.BTreeG[string] // the keys of writes; shared with the readers Over returns
	marked bool
	undo   []undo // since the mark, what each write replaced
}

// orderDegree is the degree of an overlay's ordered keys (google/btree's
// advice: a few tens).
const orderDegree = 16

// undo is a key's state before a write: its buffered value, if it had one.
type undo struct {
	key string
	old []byte
	had bool
}

// NewOverlay returns an empty overlay over base.
func NewOverlay(base Reader) *Overlay {
	return &Overlay{base: base, writes: map[string][]byte{}, order: btree.NewOrderedG[string](orderDegree)}
}

// Get implements Reader.
func (o *Overlay) Get(key []byte) ([]byte, bool, error) {
	if v, ok := o.writes[string(key)]; ok {
		return v, v != nil, nil
	}
	return o.base.Get(key)
}

// GetMany implements MultiGetter: the base's, when the overlay holds no
// writes (a read view's pending hflushes are rare and few).
func (o *Overlay) GetMany(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if len(o.writes) == 0 {
		return GetMany(o.base, keys, fn)
	}
	for i, k := range keys {
		v, ok, err := o.Get(k)
		if err != nil {
			return err
		}
		if err := fn(i, v, ok); err != nil {
			return err
		}
	}
	return nil
}

// Set implements Txn. The key and a copy of the value share one
// allocation (the apply of a create sets about ten keys).
func (o *Overlay) Set(key, value []byte) {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	o.write(bufString(buf[:len(key)]), buf[len(key):len(buf):len(buf)])
}

// Delete implements Txn.
func (o *Overlay) Delete(key []byte) { o.write(string(key), nil) }

func (o *Overlay) write(key string, value []byte) {
	old, had := o.writes[key]
	if o.marked {
		o.undo = append(o.undo, undo{key, old, had})
	}
	if !had {
		o.order.ReplaceOrInsert(key)
	}
	o.writes[key] = value
}

// Mark starts recording writes, so that Rollback can undo those made from
// now on. A new Mark forgets the previous one.
func (o *Overlay) Mark() {
	o.marked = true
	clear(o.undo) // let go of the keys and values
	o.undo = o.undo[:0]
}

// Rollback undoes the writes made since the last Mark, and the mark stays.
func (o *Overlay) Rollback() {
	for i := len(o.undo) - 1; i >= 0; i-- {
		if u := o.undo[i]; u.had {
			o.writes[u.key] = u.old
		} else {
			delete(o.writes, u.key)
			o.order.Delete(u.key)
		}
	}
	clear(o.undo)
	o.undo = o.undo[:0]
}

// bufString is b as a string, without a copy: b is never written again.
func bufString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Over returns a Reader of o's buffered writes over base instead of o's
// own base: what o's owner keeps in memory, seen over a snapshot of the
// store beneath it. It shares o's writes: o must not be written while it
// is read.
func (o *Overlay) Over(base Reader) Reader {
	return &Overlay{base: base, writes: o.writes, order: o.order}
}

// Len reports the number of buffered writes.
func (o *Overlay) Len() int { return len(o.writes) }

// Each calls fn for every buffered write in key order; deleted marks a
// delete (an empty value is a value, not a delete). fn must not modify
// the key or the value, which are the overlay's own (it may keep them).
func (o *Overlay) Each(fn func(key, value []byte, deleted bool)) {
	o.order.Ascend(func(k string) bool {
		v := o.writes[k]
		fn(unsafe.Slice(unsafe.StringData(k), len(k)), v, v == nil)
		return true
	})
}

// ApplyTo copies the buffered writes into t (through its Set and Delete,
// so that an overlay's mark records them).
func (o *Overlay) ApplyTo(t Txn) {
	for k, v := range o.writes {
		if v == nil {
			t.Delete([]byte(k))
		} else {
			t.Set([]byte(k), v)
		}
	}
}

// Scan implements Reader by merging the base's keys with the buffered ones.
func (o *Overlay) Scan(start, end []byte, fn func(key, value []byte) bool) error {
	mine := o.sortedKeys(start, end)
	i := 0
	stopped := false
	// emitMine sends buffered keys below limit (all of them when limit is
	// nil) and reports whether the scan should go on.
	emitMine := func(limit []byte) bool {
		for ; i < len(mine) && (limit == nil || mine[i] < string(limit)); i++ {
			if v := o.writes[mine[i]]; v != nil && !fn([]byte(mine[i]), v) {
				return false
			}
		}
		return true
	}
	err := o.base.Scan(start, end, func(k, v []byte) bool {
		if !emitMine(k) {
			stopped = true
			return false
		}
		if _, shadowed := o.writes[string(k)]; shadowed {
			if i < len(mine) && mine[i] == string(k) {
				if v := o.writes[mine[i]]; v != nil && !fn(k, v) {
					stopped = true
					return false
				}
				i++
			}
			return true
		}
		return fn(k, v)
	})
	if err != nil || stopped {
		return err
	}
	emitMine(nil)
	return nil
}

// sortedKeys returns the buffered keys in [start, end), in order; start
// nil is the first key, end nil past the last.
func (o *Overlay) sortedKeys(start, end []byte) []string {
	var keys []string
	add := func(k string) bool {
		keys = append(keys, k)
		return true
	}
	// NB: string(nil) is "", at or before every key.
	if end == nil {
		o.order.AscendGreaterOrEqual(string(start), add)
	} else {
		o.order.AscendRange(string(start), string(end), add)
	}
	return keys
}
