// Package pebblekv is the durable kv store of the namespace service: a pebble
// database with a bounded cache of hot values in front of it, so that memory
// stays flat however large the namespace grows. It is not a general-purpose
// database wrapper: it has exactly one writer (the apply loop) and many
// readers.
package pebblekv

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/privdir"
)

// Options size the store's memory.
type Options struct {
	// BlockCacheBytes sizes pebble's block cache (compressed blocks).
	BlockCacheBytes int64
	// HotBytes bounds the cache of decoded values in front of pebble.
	HotBytes int64
	// Logger receives pebble's log lines; nil discards them.
	Logger pebble.Logger
	// Uncached, if set, names keys that bypass the hot cache: records
	// written once and rarely read, which would only push hot ones out.
	Uncached func(key []byte) bool
}

// DefaultOptions suit a development machine.
func DefaultOptions() Options {
	return Options{BlockCacheBytes: 256 << 20, HotBytes: 256 << 20}
}

// Store is a pebble database with a hot-value cache.
//
// Concurrency: Commit is called by one goroutine at a time (the writer).
// Readers run View concurrently; a View sees either all or none of each
// Commit, because Commit updates pebble and the cache under a write lock
// that View holds for reading. The writer reads through Writer, without the
// lock, since nothing else changes the state.
type Store struct {
	dir   string
	opts  Options
	db    *pebble.DB
	cache *hotCache
	mu    sync.RWMutex // held for writing while a commit reaches pebble and the cache
	// closed is set, under mu, by Close: a View after it fails with
	// ErrClosed instead of meeting pebble's panic (a call still in flight
	// while its server stops).
	closed bool
	// seek is the writer's iterator over the state as of the last commit,
	// opened by its first read since: a lookup through it reuses its
	// levels' iterators, where a Get opens them each time. Through it, a
	// create's apply took 10-15% less (BenchmarkCreateApply).
	seek *pebble.Iterator
	// cacheWrites is whether a commit adds the keys it writes to the hot
	// cache, or only refreshes those cached already (SetWriteThrough).
	cacheWrites atomic.Bool
}

// Open opens or creates the store in dir.
func Open(dir string, o Options) (*Store, error) {
	if err := finishReplace(dir); err != nil {
		return nil, err
	}
	db, err := OpenDB(dir, o.BlockCacheBytes, stateMemTable, o.Logger)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, opts: o, db: db, cache: newHotCache(o.HotBytes)}
	s.cacheWrites.Store(true)
	return s, nil
}

// SetWriteThrough sets whether commits add what they write to the hot cache
// (the default), or only refresh the keys it holds already, which keeps it
// exact. A Raft follower serves no reads: its commits need not cache the
// names and inodes they create, which nothing but a later apply reads, and
// adding them took a tenth of a create's apply (BenchmarkApplyCreates).
func (s *Store) SetWriteThrough(on bool) { s.cacheWrites.Store(on) }

// Checkpoint writes a consistent copy of the database to dir, which must
// not exist; it shares immutable files with the live database by hard links.
func (s *Store) Checkpoint(dir string) error {
	return s.db.Checkpoint(dir, pebble.WithFlushedWAL())
}

// Replace swaps the database for the one in src (a checkpoint, typically
// received from another member), which it moves into place. Readers wait
// while it happens. A crash in the middle leaves either database whole:
// the next Open finishes or undoes the swap.
func (s *Store) Replace(src string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.closeSeek(); err != nil {
		return err
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	old := s.dir + ".old"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(s.dir, old); err != nil {
		return err
	}
	if err := os.Rename(src, s.dir); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(s.dir)); err != nil {
		return err
	}
	db, err := OpenDB(s.dir, s.opts.BlockCacheBytes, stateMemTable, s.opts.Logger)
	if err != nil {
		return err
	}
	s.db, s.cache = db, newHotCache(s.opts.HotBytes)
	return os.RemoveAll(old)
}

// finishReplace completes a Replace that a crash interrupted: with dir
// gone, the old database is still whole and comes back; with dir present,
// the new one is, and the old one goes.
func finishReplace(dir string) error {
	old := dir + ".old"
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(old, dir)
	}
	return os.RemoveAll(old)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// stateMemTable sizes the state's memtables. The serial apply searches the
// memtable's skiplist for every key it reads or writes (a create's new
// name is a miss that no cache answers), and a skiplist that fits the CPU's
// last-level cache is searched in half the time: with 8 MiB rather than 64,
// the apply of a create took 15-25% less CPU and the skiplist search half.
const stateMemTable = 8 << 20

// OpenDB opens a pebble database with the options the namespace service
// uses: an explicit block cache, memtables of the size given and bloom
// filters on every level; dir, and all it holds, readable and writable by
// the process's user alone (privateFS), whatever an older one left.
func OpenDB(dir string, blockCache int64, memTable uint64, logger pebble.Logger) (*pebble.DB, error) {
	if err := privdir.Close(dir); err != nil {
		return nil, err
	}
	cache := pebble.NewCache(blockCache)
	defer cache.Unref()
	opts := options(memTable)
	opts.Cache = cache
	if logger == nil {
		logger = quietLogger{}
	}
	opts.Logger = logger
	return pebble.Open(dir, opts)
}

// options are the options of the databases OpenDB opens, but their cache
// and logger: also those the sorted tables are written and read with
// (tables.go), so that a store takes them.
func options(memTable uint64) *pebble.Options {
	opts := &pebble.Options{MemTableSize: memTable, FS: privateFS{vfs.Default}}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	opts.EnsureDefaults()
	return opts
}

// Close flushes the memtable, so that the next Open has no write-ahead log
// to replay, and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	return errors.Join(s.closeSeek(), s.db.Flush(), s.db.Close())
}

// ErrClosed is what a View of a closed store returns.
var ErrClosed = errors.New("pebblekv: the store is closed")

// closeSeek closes the writer's iterator, which no longer sees the state.
func (s *Store) closeSeek() error {
	if s.seek == nil {
		return nil
	}
	err := s.seek.Close()
	s.seek = nil
	return err
}

// Stats are what a store says of itself, for metrics: pebble's own figures
// and the hot cache's.
type Stats struct {
	// Compactions done, the bytes compactions are behind (the estimated
	// debt), and those running.
	Compactions, CompactionDebt, CompactionsRunning int64
	// ReadAmp is the sublevels and levels a read may look in.
	ReadAmp int
	// BlockCacheHits and BlockCacheMisses are pebble's block cache's
	// lookups; BlockCacheBytes what it holds.
	BlockCacheHits, BlockCacheMisses, BlockCacheBytes int64
	// HotHits and HotMisses are the hot cache's lookups; HotBytes what its
	// rings hold.
	HotHits, HotMisses uint64
	HotBytes           int64
	// DiskBytes is the disk the database uses: tables, logs, manifests.
	DiskBytes uint64
	// Flushes of memtables to tables.
	Flushes int64
}

// Stats returns the store's figures (pebble's take a lock of its own: not
// for every request).
func (s *Store) Stats() Stats {
	m := s.db.Metrics()
	st := Stats{Compactions: m.Compact.Count, CompactionDebt: int64(m.Compact.EstimatedDebt),
		CompactionsRunning: m.Compact.NumInProgress, ReadAmp: m.ReadAmp(), BlockCacheHits: m.BlockCache.Hits,
		BlockCacheMisses: m.BlockCache.Misses, BlockCacheBytes: m.BlockCache.Size, DiskBytes: m.DiskSpaceUsage(),
		Flushes: m.Flush.Count}
	st.HotHits, st.HotMisses, st.HotBytes = s.cache.stats()
	return st
}

// DB exposes the database for checkpoints and metrics.
func (s *Store) DB() *pebble.DB { return s.db }

// View runs fn with a consistent reader of the committed state.
func (s *Store) View(fn func(r kv.Reader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return fn(reader{s: s})
}

// Writer returns the reader the single writer uses between commits. It
// caches no misses: the writer looks up names to create them, and a miss
// it cached would only be refreshed by the commit that follows.
func (s *Store) Writer() kv.Reader { return reader{s: s, writer: true} }

// Commit writes the overlay's writes atomically; sync makes them durable
// before it returns.
func (s *Store) Commit(ov *kv.Overlay, sync bool) error {
	b := s.db.NewBatch()
	defer b.Close()
	type write struct {
		k, v    []byte
		deleted bool
	}
	cached := make([]write, 0, ov.Len())
	var err error
	ov.Each(func(k, v []byte, deleted bool) {
		if deleted {
			err = errors.Join(err, b.Delete(k, nil))
		} else {
			err = errors.Join(err, b.Set(k, v, nil))
		}
		if !s.uncached(k) {
			cached = append(cached, write{k, v, deleted})
		}
	})
	if err != nil {
		return err
	}
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := errors.Join(s.closeSeek(), b.Commit(opts)); err != nil {
		return err
	}
	add := s.cache.refresh
	if s.cacheWrites.Load() {
		add = s.cache.add // write-through: a stat follows a create
	}
	for _, w := range cached {
		add(w.k, w.v, w.deleted)
	}
	return nil
}

// Sync makes every commit so far durable.
func (s *Store) Sync() error { return s.db.LogData(nil, pebble.Sync) }

type reader struct {
	s      *Store
	writer bool
}

func (r reader) Get(key []byte) ([]byte, bool, error) {
	return r.GetAppend(nil, key)
}

// GetAppend implements kv.AppendGetter: Get, with the value appended to dst
// (nil: a new slice).
func (r reader) GetAppend(dst, key []byte) ([]byte, bool, error) {
	uncached := r.s.uncached(key)
	if !uncached {
		if v, exists, cached := r.s.cache.getAppend(dst, key); cached {
			return v, exists, nil
		}
	}
	get := r.s.get
	if r.writer {
		get = r.s.seekGet
	}
	v, ok, err := get(dst, key)
	if err != nil {
		return dst, false, err
	}
	if !uncached && (ok || !r.writer) { // the writer caches no miss (see Writer)
		r.s.cache.add(key, v[len(dst):], !ok)
	}
	if !ok {
		return dst, false, nil
	}
	return v, true, nil
}

// appendTo appends v to dst, or copies it if dst is nil.
func appendTo(dst, v []byte) []byte {
	if dst == nil {
		return bytes.Clone(v)
	}
	return append(dst, v...)
}

// get looks key up in pebble, appending its value to dst (nil: a copy).
func (s *Store) get(dst, key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, err
	}
	defer closer.Close()
	return appendTo(dst, v), true, nil
}

// seekGet is get for the writer, through its iterator. The iterator reads
// the bloom filters of the last level too, which pebble skips by default:
// the writer's misses (a create's new name) are frequent, and the last
// level holds most tables.
func (s *Store) seekGet(dst, key []byte) ([]byte, bool, error) {
	if s.seek == nil {
		it, err := s.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return dst, false, err
		}
		s.seek = it
	}
	if !s.seek.SeekPrefixGE(key) || !bytes.Equal(s.seek.Key(), key) {
		return dst, false, s.seek.Error()
	}
	v, err := s.seek.ValueAndErr()
	if err != nil {
		return dst, false, err
	}
	return appendTo(dst, v), true, nil
}

func (s *Store) uncached(key []byte) bool { return s.opts.Uncached != nil && s.opts.Uncached(key) }

func (r reader) Scan(start, end []byte, fn func(key, value []byte) bool) error {
	it, err := r.s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	return errors.Join(it.Error(), it.Close())
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic("pebble: fatal: " + format)
}
