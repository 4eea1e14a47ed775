package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// model is the naive cache the differential tests hold the real one to: the
// pages of each block cached, and those corrupted on disk.
type model struct {
	sizes   map[string]int64
	pages   map[string]map[int64]bool // page → corrupt
	hits    uint64
	misses  uint64
	corrupt uint64
}

func newModel(r *rand.Rand, nblocks int) *model {
	m := &model{sizes: map[string]int64{}, pages: map[string]map[int64]bool{}}
	for i := range nblocks {
		size := (1 + r.Int64N(8)) * testPS
		if i%2 == 0 {
			size -= r.Int64N(testPS - 1) // a short last page
		}
		key := fmt.Sprintf("blk-%02d", i)
		m.sizes[key] = size
		m.pages[key] = map[int64]bool{}
	}
	return m
}

func (m *model) keys() []string {
	keys := make([]string, 0, len(m.sizes))
	for k := range m.sizes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// end is the block's end as the cache knows it: from its short last page,
// if that is cached; else -1.
func (m *model) end(key string) int64 {
	size := m.sizes[key]
	if _, ok := m.pages[key][(size-1)/testPS]; ok && size%testPS != 0 {
		return size
	}
	return -1
}

// read predicts ReadAt or Acquire of [off, off+n): the pages to read, the
// bytes returned, and the error.
func (m *model) read(key string, off, n int64) (pages []int64, got int64, err error) {
	end := m.end(key)
	if end >= 0 && off >= end {
		return nil, 0, io.EOF
	}
	last := (off + n - 1) / testPS
	if end >= 0 {
		last = min(last, (end-1)/testPS)
	}
	for i := off / testPS; i <= last; i++ {
		if _, ok := m.pages[key][i]; !ok {
			return nil, 0, ErrMiss
		}
		pages = append(pages, i)
	}
	if end >= 0 && off+n > end {
		return pages, end - off, io.EOF
	}
	return pages, n, nil
}

func (m *model) missing(key string, off, n int64) []Range {
	last := (off + n - 1) / testPS
	if end := m.end(key); end >= 0 {
		last = min(last, (end-1)/testPS)
	}
	var out []Range
	for i := off / testPS; i <= last; i++ {
		if _, ok := m.pages[key][i]; ok {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Off+out[k].Len == i*testPS {
			out[k].Len += testPS
		} else {
			out = append(out, Range{i * testPS, testPS})
		}
	}
	return out
}

func (m *model) stats() (blocks, pages, used int64) {
	for key, ps := range m.pages {
		if len(ps) > 0 {
			blocks++
		}
		for i := range ps {
			pages++
			used += min(testPS, m.sizes[key]-i*testPS)
		}
	}
	return
}

// seqRun is one run of the sequential differential test.
type seqRun struct {
	t   *testing.T
	r   *rand.Rand
	cfg Config
	c   *Cache
	m   *model
}

// TestDifferentialSequential runs random operations against the cache and
// the model, one at a time, with no eviction (the capacity is ample), so the
// model predicts every answer exactly, counters included.
func TestDifferentialSequential(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			cfg := Config{Dirs: []Dir{{t.TempDir(), 1000 * testPS}, {t.TempDir(), 1000 * testPS}}, PageSize: testPS, NoSync: true}
			s := &seqRun{t: t, r: r, cfg: cfg, c: mustOpen(t, cfg), m: newModel(r, 12)}
			defer func() { s.c.Close() }()
			for range 1500 {
				s.step()
				s.check()
			}
		})
	}
}

func (s *seqRun) step() {
	keys := s.m.keys()
	key := keys[s.r.IntN(len(keys))]
	size := s.m.sizes[key]
	off := s.r.Int64N(size + testPS)
	n := 1 + s.r.Int64N(3*testPS)
	switch op := s.r.IntN(100); {
	case op < 30:
		s.put(key, size)
	case op < 55:
		s.readAt(key, off, n)
	case op < 65:
		s.acquire(key, off, n)
	case op < 75:
		if got, want := s.c.Missing(key, off, n), s.m.missing(key, off, n); !slices.Equal(got, want) {
			s.t.Fatalf("Missing(%s, %d, %d) = %v, model %v", key, off, n, got, want)
		}
	case op < 82:
		s.c.Invalidate(key, off, n)
		for i := off / testPS; i <= (off+n-1)/testPS; i++ {
			if _, ok := s.m.pages[key][i]; ok {
				delete(s.m.pages[key], i)
				s.m.corrupt++
			}
		}
	case op < 85:
		s.c.Drop(key)
		s.m.pages[key] = map[int64]bool{}
	case op < 95:
		s.corrupt(key)
	default:
		s.c.Close()
		s.c = mustOpen(s.t, s.cfg)
		s.m.hits, s.m.misses, s.m.corrupt = 0, 0, 0
	}
}

func (s *seqRun) put(key string, size int64) {
	npages := (size + testPS - 1) / testPS
	a := s.r.Int64N(npages)
	b := a + 1 + s.r.Int64N(npages-a)
	data := blockBytes(key, size)
	if err := s.c.Put(key, a*testPS, data[a*testPS:min(b*testPS, size)]); err != nil {
		s.t.Fatalf("Put(%s, pages %d-%d): %v", key, a, b, err)
	}
	for i := a; i < b; i++ {
		if _, ok := s.m.pages[key][i]; !ok {
			s.m.pages[key][i] = false
		}
	}
}

// corrupt flips a byte of a cached page on disk.
func (s *seqRun) corrupt(key string) {
	var cachedPages []int64
	for i := range s.m.pages[key] {
		cachedPages = append(cachedPages, i)
	}
	if len(cachedPages) == 0 {
		return
	}
	slices.Sort(cachedPages)
	i := cachedPages[s.r.IntN(len(cachedPages))]
	if s.m.pages[key][i] {
		return // flipping the same byte again could restore it
	}
	plen := min(testPS, s.m.sizes[key]-i*testPS)
	corruptByte(s.t, s.c, key, i*testPS+s.r.Int64N(plen))
	s.m.pages[key][i] = true
}

func (s *seqRun) readAt(key string, off, n int64) {
	pages, wantN, wantErr := s.m.read(key, off, n)
	if wantErr == nil || wantErr == io.EOF {
		for _, i := range pages {
			if s.m.pages[key][i] { // the first corrupt page is found and dropped
				wantN, wantErr = 0, ErrCorrupt
				delete(s.m.pages[key], i)
				s.m.corrupt++
				break
			}
		}
	}
	if wantErr == nil || wantErr == io.EOF {
		s.m.hits++
	} else {
		s.m.misses++
	}
	p := make([]byte, n)
	got, err := s.c.ReadAt(key, p, off)
	if int64(got) != wantN || !errors.Is(err, wantErr) && err != wantErr {
		s.t.Fatalf("ReadAt(%s, %d, %d) = %d, %v; model %d, %v", key, off, n, got, err, wantN, wantErr)
	}
	if want := blockBytes(key, s.m.sizes[key])[min(off, s.m.sizes[key]):][:got]; !bytes.Equal(p[:got], want) {
		s.t.Fatalf("ReadAt(%s, %d, %d): wrong bytes", key, off, n)
	}
}

func (s *seqRun) acquire(key string, off, n int64) {
	pages, _, wantErr := s.m.read(key, off, n)
	if len(pages) == 0 && wantErr == io.EOF || wantErr == ErrMiss {
		_, err := s.c.Acquire(key, off, n)
		if err != wantErr {
			s.t.Fatalf("Acquire(%s, %d, %d) = %v, model %v", key, off, n, err, wantErr)
		}
		s.countModel(wantErr == io.EOF)
		return
	}
	h, err := s.c.Acquire(key, off, n)
	if err != nil || len(h.CRCs) != len(pages) || h.FirstPage != pages[0]*testPS {
		s.t.Fatalf("Acquire(%s, %d, %d) = %+v, %v; model pages %v", key, off, n, h, err, pages)
	}
	defer h.Release()
	s.countModel(true)
	data := blockBytes(key, s.m.sizes[key])
	for k, i := range pages {
		got, err := h.ReadChunk(k, nil)
		if s.m.pages[key][i] { // a short-circuit reader reports the bad page
			if !errors.Is(err, ErrCorrupt) {
				s.t.Fatalf("ReadChunk of corrupt page %d of %s: %v", i, key, err)
			}
			poff, plen := h.ChunkSpan(k)
			s.c.Invalidate(key, poff, plen)
			delete(s.m.pages[key], i)
			s.m.corrupt++
			continue
		}
		if off, plen := h.ChunkSpan(k); err != nil || !bytes.Equal(got, data[off:off+plen]) {
			s.t.Fatalf("ReadChunk of page %d of %s: %v", i, key, err)
		}
	}
}

func (s *seqRun) countModel(hit bool) {
	if hit {
		s.m.hits++
	} else {
		s.m.misses++
	}
}

func (s *seqRun) check() {
	s.t.Helper()
	checkInvariants(s.t, s.c)
	st := s.c.Stats()
	blocks, pages, used := s.m.stats()
	if st.Blocks != blocks || st.Pages != pages || st.Used != used || st.Hits != s.m.hits ||
		st.Misses != s.m.misses || st.Corruptions != s.m.corrupt || st.Evictions != 0 {
		s.t.Fatalf("stats %+v; model blocks %d pages %d used %d hits %d misses %d corruptions %d",
			st, blocks, pages, used, s.m.hits, s.m.misses, s.m.corrupt)
	}
}

// TestDifferentialConcurrent runs random operations from many goroutines
// on a cache small enough to evict all the time, while bytes of its files
// are flipped on disk. Whatever the interleaving, every byte a read returns
// must be the block's, and errors must be the expected kinds. At the end the
// index must add up, also after a restart.
func TestDifferentialConcurrent(t *testing.T) {
	cfg := Config{Dirs: []Dir{{t.TempDir(), 60 * testPS}, {t.TempDir(), 40 * testPS}}, PageSize: testPS, NoSync: true}
	c := mustOpen(t, cfg)
	m := newModel(rand.New(rand.NewPCG(99, 1)), 24)
	keys := m.keys()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for range 600 {
				key := keys[r.IntN(len(keys))]
				if err := concurrentOp(c, r, key, m.sizes[key]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, c)
	if s := c.Stats(); s.Evictions == 0 || s.Corruptions == 0 || s.Hits == 0 {
		t.Fatalf("the run did not exercise eviction, corruption and hits: %+v", s)
	}
	before := c.Stats()
	c.Close()
	c = mustOpen(t, cfg)
	defer c.Close()
	checkInvariants(t, c)
	if after := c.Stats(); after.Used != before.Used || after.Pages != before.Pages || after.Blocks != before.Blocks {
		t.Fatalf("stats %+v after a restart, %+v before", after, before)
	}
	for _, key := range keys {
		if err := checkCached(c, key, m.sizes[key]); err != nil {
			t.Fatal(err)
		}
	}
}

// concurrentOp runs one random operation and checks what it can.
func concurrentOp(c *Cache, r *rand.Rand, key string, size int64) error {
	data := blockBytes(key, size)
	off, n := r.Int64N(size+testPS), 1+r.Int64N(3*testPS)
	switch op := r.IntN(100); {
	case op < 35:
		a := r.Int64N((size + testPS - 1) / testPS)
		if err := c.Put(key, a*testPS, data[a*testPS:min(size, (a+1+r.Int64N(4))*testPS)]); err != nil {
			return fmt.Errorf("Put(%s): %v", key, err)
		}
	case op < 70:
		return checkReadAt(c, key, data, off, n)
	case op < 80:
		return checkAcquire(c, key, data, off, n)
	case op < 85:
		c.Missing(key, off, n)
	case op < 90:
		c.Invalidate(key, off, n)
	case op < 92:
		c.Drop(key)
	default:
		flipCached(c, key, r.Int64N(size))
	}
	return nil
}

func checkReadAt(c *Cache, key string, data []byte, off, n int64) error {
	p := make([]byte, n)
	got, err := c.ReadAt(key, p, off)
	switch {
	case errors.Is(err, ErrMiss), errors.Is(err, ErrCorrupt):
		if got != 0 {
			return fmt.Errorf("ReadAt(%s, %d, %d) returned %d bytes with %v", key, off, n, got, err)
		}
	case err != nil && err != io.EOF:
		return fmt.Errorf("ReadAt(%s, %d, %d): %v", key, off, n, err)
	case !bytes.Equal(p[:got], data[min(off, int64(len(data))):][:got]):
		return fmt.Errorf("ReadAt(%s, %d, %d) returned wrong bytes", key, off, n)
	case (err == io.EOF) != (off+n > int64(len(data))) || err == nil && int64(got) != n:
		return fmt.Errorf("ReadAt(%s, %d, %d) = %d, %v for a block of %d", key, off, n, got, err, len(data))
	}
	return nil
}

func checkAcquire(c *Cache, key string, data []byte, off, n int64) error {
	h, err := c.Acquire(key, off, n)
	if errors.Is(err, ErrMiss) || err == io.EOF {
		return nil
	}
	if err != nil {
		return fmt.Errorf("Acquire(%s, %d, %d): %v", key, off, n, err)
	}
	defer h.Release()
	for i := range h.CRCs {
		got, err := h.ReadChunk(i, nil)
		poff, plen := h.ChunkSpan(i)
		if errors.Is(err, ErrCorrupt) {
			c.Invalidate(key, poff, plen)
			continue
		}
		if err != nil || !bytes.Equal(got, data[poff:poff+plen]) {
			return fmt.Errorf("ReadChunk %d of %s: %v, or wrong bytes", i, key, err)
		}
	}
	return nil
}

// flipCached flips a byte of key's data file, if it is cached.
func flipCached(c *Cache, key string, off int64) {
	b := c.testBlock(key)
	if b == nil {
		return
	}
	f, err := c.fs.OpenFile(b.dataPath(), 2 /* O_RDWR */, 0)
	if err != nil {
		return // evicted meanwhile
	}
	defer f.Close()
	var one [1]byte
	if _, err := f.ReadAt(one[:], off); err == nil {
		one[0] ^= 0xff
		_, _ = f.WriteAt(one[:], off)
	}
}

// checkCached reads every cached page of key: right bytes or ErrCorrupt.
func checkCached(c *Cache, key string, size int64) error {
	for i := int64(0); i*testPS < size; i++ {
		if len(c.Missing(key, i*testPS, 1)) > 0 {
			continue
		}
		if err := checkReadAt(c, key, blockBytes(key, size), i*testPS, testPS); err != nil {
			return err
		}
	}
	return nil
}
