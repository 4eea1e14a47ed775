// Package kv defines the ordered key-value view that the namespace reads and
// writes, with an in-memory implementation (Mem) and the write overlay
// (Overlay) the apply path stacks over the store. It is not a database: the
// durable implementation lives in pebblekv.
package kv

import (
	"bytes"
	"sort"
)

// Reader is a consistent, ordered view of keys.
//
// Values passed to callers must not be modified and are valid only until the
// next call on the same Reader.
type Reader interface {
	// Get returns the value of key and whether it exists.
	Get(key []byte) (value []byte, ok bool, err error)
	// Scan calls fn for each key in [start, end) in ascending order until fn
	// returns false.
	Scan(start, end []byte, fn func(key, value []byte) bool) error
}

// AppendGetter is a Reader whose Get can append a value to the caller's
// buffer: a loop of Gets (a listing's entries, each its inode) reuses one
// buffer instead of making a slice each.
type AppendGetter interface {
	// GetAppend is Get with the value appended to dst (nil: a new slice);
	// without the key, it returns dst.
	GetAppend(dst, key []byte) (value []byte, ok bool, err error)
}

// GetAppend is r's GetAppend if it has one, else its Get.
func GetAppend(r Reader, dst, key []byte) ([]byte, bool, error) {
	if a, ok := r.(AppendGetter); ok {
		return a.GetAppend(dst, key)
	}
	v, ok, err := r.Get(key)
	if err != nil || !ok {
		return dst, false, err
	}
	return append(dst, v...), true, nil
}

// MultiGetter is a Reader that looks up a run of keys for less than a Get
// each: a listing's page reads a thousand inodes, which one Get each made
// three quarters of a listing's CPU (a pebble lookup is built and torn
// down for each).
type MultiGetter interface {
	// GetMany calls fn with the value of each of keys (ok false: it is
	// absent), in the order of keys, until fn fails; the value is good
	// only during the call.
	GetMany(keys [][]byte, fn func(i int, value []byte, ok bool) error) error
}

// GetMany is r's GetMany if it has one, else a GetAppend for each key.
func GetMany(r Reader, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if m, ok := r.(MultiGetter); ok {
		return m.GetMany(keys, fn)
	}
	var buf []byte
	for i, k := range keys {
		v, ok, err := GetAppend(r, buf[:0], k)
		if err != nil {
			return err
		}
		buf = v
		if err := fn(i, v, ok); err != nil {
			return err
		}
	}
	return nil
}

// Txn is a Reader that also takes writes; reads see the Txn's own writes.
// A Txn is used by one goroutine at a time.
type Txn interface {
	Reader
	Set(key, value []byte)
	Delete(key []byte)
}

// Mem is an in-memory Txn, for tests. The zero value is empty and ready.
type Mem struct {
	m map[string][]byte
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{m: map[string][]byte{}} }

// Get implements Reader.
func (m *Mem) Get(key []byte) ([]byte, bool, error) {
	v, ok := m.m[string(key)]
	return v, ok, nil
}

// Scan implements Reader.
func (m *Mem) Scan(start, end []byte, fn func(key, value []byte) bool) error {
	keys := make([]string, 0)
	for k := range m.m {
		if inRange([]byte(k), start, end) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn([]byte(k), m.m[k]) {
			break
		}
	}
	return nil
}

// Set implements Txn.
func (m *Mem) Set(key, value []byte) {
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[string(key)] = bytes.Clone(value)
}

// Delete implements Txn.
func (m *Mem) Delete(key []byte) { delete(m.m, string(key)) }

// Len reports the number of keys.
func (m *Mem) Len() int { return len(m.m) }

func inRange(k, start, end []byte) bool {
	return bytes.Compare(k, start) >= 0 && (end == nil || bytes.Compare(k, end) < 0)
}
