package databench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
)

// Cache mode's side of the run: the files are objects put straight into
// the bucket, as another S3 client would, and the direct way reads them
// back from there, through the same link as the worker, with no Strata.

// direct is the benchmark's own traffic with the bucket, counted as the
// workers count theirs.
type direct struct {
	bucket        object.Store
	read, written atomic.Uint64
	// bufs holds the sequential readers' GET buffers between files.
	bufs sync.Pool
}

// counters are the direct way's bytes so far, as Counters.
func (d *direct) counters() Counters {
	return Counters{BucketRead: d.read.Load(), BucketWritten: d.written.Load()}
}

// putTrial is writeTrial's cache-mode twin: each round puts Files new
// objects straight into the bucket, round k under base/w<k>, after
// deleting (untimed, from the bucket too) what round k-1 put. Strata is
// not asked anything: its namespace meets the objects when a reader
// first opens them, as it would meet any other client's.
func (r *runner) putTrial(res *Result, base string, paths *[]string) *trial {
	round := 0
	t := &trial{res: res}
	t.prep = func(ctx context.Context) error {
		if round > 0 {
			if err := r.deleteObjects(ctx, fmt.Sprintf("%s/w%d/", base, round-1)); err != nil {
				return err
			}
		}
		*paths = r.roundPaths(base, round, *paths)
		round++
		return nil
	}
	t.run = func(ctx context.Context, _ []*benchkit.Recorder) error { return r.putObjects(ctx, *paths) }
	return t
}

// roundPaths are the paths of the files of write round k under base,
// reusing paths' array.
func (r *runner) roundPaths(base string, k int, paths []string) []string {
	paths = paths[:0]
	for i := range r.cfg.Files {
		paths = append(paths, fmt.Sprintf("%s/w%d/f%d", base, k, i))
	}
	return paths
}

// deleteObjects deletes every object under the Strata directory dir (with
// its trailing slash) from the bucket.
func (r *runner) deleteObjects(ctx context.Context, dir string) error {
	infos, err := r.direct.bucket.List(ctx, statemachine.ObjectKey(dir), "", 0)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := r.direct.bucket.Delete(ctx, info.Key); err != nil {
			return err
		}
	}
	return nil
}

// putObjects puts the files at paths, with the pattern, as objects: a
// multipart upload of 16 MiB parts, 4 in flight, as an S3 client uploads
// a file it has at hand (object.PutParallel).
func (r *runner) putObjects(ctx context.Context, paths []string) error {
	return r.eachFile(len(paths), func(i int, _ []byte) error {
		body := &patternFile{pat: r.pat, file: i, window: r.cfg.IOSize}
		if err := object.PutParallel(ctx, r.direct.bucket, statemachine.ObjectKey(paths[i]), body, r.cfg.FileSize, object.ParallelOptions{}); err != nil {
			return fmt.Errorf("put %s: %w", paths[i], err)
		}
		r.direct.written.Add(uint64(r.cfg.FileSize))
		return nil
	})
}

// patternFile is file f's content as an io.ReaderAt, in windows the
// pattern was made for.
type patternFile struct {
	pat    *pattern
	file   int
	window int
}

func (p *patternFile) ReadAt(b []byte, off int64) (int, error) {
	for done := 0; done < len(b); {
		n := copy(b[done:], p.pat.at(p.file, off+int64(done), min(len(b)-done, p.window)))
		done += n
	}
	return len(b), nil
}

// readDirect reads the objects of the files at paths whole, IOSize bytes a
// call, as readStrata reads the files, through a prefetcher each.
func (r *runner) readDirect(ctx context.Context, paths []string) error {
	return r.eachFile(len(paths), func(i int, buf []byte) error {
		pf := r.newPrefetcher(ctx, statemachine.ObjectKey(paths[i]), r.cfg.FileSize)
		defer pf.Close()
		return r.readAll(paths[i]+" (direct)", i, pf, buf)
	})
}

// prefetcher reads one object from start to end as S3A's prefetching
// input stream does: the object cut into blocks of DirectGet bytes, each
// one ranged GET, DirectAhead of them in flight beyond the block being
// read. It is not safe for concurrent use.
type prefetcher struct {
	ctx     context.Context
	cancel  context.CancelFunc
	d       *direct
	key     string
	size    int64
	getSize int64
	ahead   int
	next    int64  // where the next GET starts
	queue   []*get // GETs started and not yet read, in order
	cur     *get   // the block being read
	pos     int    // in cur.buf
}

// get is one GET of a prefetcher; done closes when buf is full or err set.
type get struct {
	buf  []byte
	done chan struct{}
	err  error
}

func (r *runner) newPrefetcher(ctx context.Context, key string, size int64) *prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	return &prefetcher{ctx: ctx, cancel: cancel, d: &r.direct, key: key, size: size, getSize: r.cfg.DirectGet, ahead: r.cfg.DirectAhead}
}

// Read implements io.Reader.
func (p *prefetcher) Read(b []byte) (int, error) {
	if p.cur == nil || p.pos == len(p.cur.buf) {
		if err := p.advance(); err != nil {
			return 0, err
		}
	}
	n := copy(b, p.cur.buf[p.pos:])
	p.pos += n
	return n, nil
}

// advance makes the next block current, once its GET is done, and keeps
// ahead GETs in flight.
func (p *prefetcher) advance() error {
	if p.cur != nil {
		p.d.putBuf(p.cur.buf)
		p.cur = nil
	}
	p.fill()
	if len(p.queue) == 0 {
		return io.EOF
	}
	g := p.queue[0]
	p.queue = p.queue[1:]
	select {
	case <-g.done:
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
	if g.err != nil {
		return g.err
	}
	p.cur, p.pos = g, 0
	p.fill()
	return nil
}

// fill starts GETs until ahead are in flight or the object is covered.
func (p *prefetcher) fill() {
	for len(p.queue) < p.ahead && p.next < p.size {
		n := min(p.getSize, p.size-p.next)
		g := &get{buf: p.d.getBuf(p.getSize)[:n], done: make(chan struct{})}
		off := p.next
		p.next += n
		p.queue = append(p.queue, g)
		go func() {
			defer close(g.done)
			g.err = p.d.readAt(p.ctx, p.key, g.buf, off)
		}()
	}
}

// Close stops the GETs in flight and waits for them, so that their
// buffers can be used again.
func (p *prefetcher) Close() error {
	p.cancel()
	for _, g := range p.queue {
		<-g.done
		p.d.putBuf(g.buf)
	}
	if p.cur != nil {
		p.d.putBuf(p.cur.buf)
	}
	p.queue, p.cur = nil, nil
	return nil
}

// getBuf returns a buffer of size bytes' capacity, reused if one is free.
func (d *direct) getBuf(size int64) []byte {
	if b, ok := d.bufs.Get().(*[]byte); ok && int64(cap(*b)) >= size {
		return (*b)[:size]
	}
	return make([]byte, size)
}

func (d *direct) putBuf(b []byte) { d.bufs.Put(&b) }

// readAt fills p with the object key's bytes at off, in one ranged GET.
func (d *direct) readAt(ctx context.Context, key string, p []byte, off int64) error {
	rc, err := d.bucket.Get(ctx, key, off, int64(len(p)))
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, p)
	d.read.Add(uint64(n))
	if err != nil {
		return fmt.Errorf("get %s at %d: %w", key, off+int64(n), err)
	}
	return nil
}

// objectAt is an object as an io.ReaderAt for the direct random reads:
// each ReadAt is one ranged GET of exactly the bytes asked for, the least
// any S3 client can do (S3A's random input policy reads at least its
// readahead range, 64 KiB).
type objectAt struct {
	ctx  context.Context
	d    *direct
	key  string
	size int64
}

func (o *objectAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= o.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), o.size-off))
	if err := o.d.readAt(o.ctx, o.key, p[:n], off); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// directFiles returns the main files' objects as io.ReaderAts.
func (r *runner) directFiles(ctx context.Context) []io.ReaderAt {
	out := make([]io.ReaderAt, len(r.strata))
	for i, p := range r.strata {
		out[i] = &objectAt{ctx: ctx, d: &r.direct, key: statemachine.ObjectKey(p), size: r.cfg.FileSize}
	}
	return out
}

// loadMain brings the main files into the workers' caches, untimed, as
// `strata admin load` does: in cache mode nothing is cached by the write,
// and warm reads must find every block cached.
func (r *runner) loadMain(ctx context.Context) error {
	r.progressf("cache mode: loading every file into the worker's cache, untimed (strata admin load)")
	return r.eachFile(len(r.strata), func(i int, _ []byte) error {
		_, err := r.c.LoadFile(ctx, r.strata[i])
		if err != nil {
			return fmt.Errorf("load %s: %w", r.strata[i], err)
		}
		return nil
	})
}
