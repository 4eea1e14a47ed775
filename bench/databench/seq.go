package databench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/client"
)

// writeMain writes the main files, Strata (in cache mode: objects put
// straight into the bucket) and raw alternately, Repeat rounds, and learns
// their block size. In cache mode it then loads them into the cache, which
// the write did not.
func (r *runner) writeMain(ctx context.Context) error {
	st := r.seqResult(KindWrite, WayStrata, r.cfg.BlockSize, false)
	write := r.writeTrial(st, r.cfg.Dir, &r.strata)
	if r.cache() {
		st = r.seqResult(KindWrite, WayDirect, 0, false)
		write = r.putTrial(st, r.cfg.Dir, &r.strata)
	}
	raw := r.seqResult(KindWrite, WayRaw, 0, false)
	err := r.alternate(ctx, r.cfg.Repeat, write,
		&trial{res: raw, run: func(ctx context.Context, _ []*benchkit.Recorder) error { return r.writeRaw(r.raw) }})
	if err != nil {
		return err
	}
	fst, err := r.c.Stat(ctx, r.strata[0])
	if err != nil {
		return err
	}
	r.rep.Params.BlockSize = int64(fst.BlockSize)
	if r.cache() {
		return r.loadMain(ctx)
	}
	st.BlockSize = int64(fst.BlockSize)
	return nil
}

// writeTrial writes Files new Strata files with res.BlockSize in each
// round, round k under base/w<k>, after removing (untimed) what round k-1
// wrote; *paths are the files of the round last written.
func (r *runner) writeTrial(res *Result, base string, paths *[]string) *trial {
	round := 0
	t := &trial{res: res}
	t.prep = func(ctx context.Context) error {
		if round > 0 {
			if _, err := r.c.Delete(ctx, fmt.Sprintf("%s/w%d", base, round-1), true); err != nil {
				return err
			}
		}
		dir := fmt.Sprintf("%s/w%d", base, round)
		*paths = r.roundPaths(base, round, *paths)
		round++
		_, err := r.c.Mkdirs(ctx, dir, 0o755)
		return err
	}
	t.run = func(ctx context.Context, _ []*benchkit.Recorder) error {
		return r.writeStrata(ctx, *paths, res.BlockSize)
	}
	return t
}

// seqResult is a new result of a sequential measurement over all files.
func (r *runner) seqResult(kind Kind, way Way, blockSize int64, sweep bool) *Result {
	n := int64(r.cfg.Files)
	calls := (r.cfg.FileSize + int64(r.cfg.IOSize) - 1) / int64(r.cfg.IOSize)
	return &Result{Kind: kind, Way: way, Size: r.cfg.IOSize, BlockSize: blockSize, Sweep: sweep,
		Bytes: n * r.cfg.FileSize, Ops: n * calls}
}

// seqPhase reads the files sequentially: cold (the cache emptied before
// each round), in cache mode direct (the objects from the bucket, no
// Strata), warm (the cache and the OS page cache hold the blocks) and raw
// (the raw files, also in the page cache).
func (r *runner) seqPhase(ctx context.Context) error {
	bs := r.rep.Params.BlockSize
	var trials []*trial
	if r.coldOK {
		trials = append(trials, &trial{res: r.seqResult(KindSeq, WayCold, bs, false), prep: r.dropCache,
			run: func(ctx context.Context, _ []*benchkit.Recorder) error { return r.readStrata(ctx, r.strata) }})
	}
	if r.cache() {
		trials = append(trials, &trial{res: r.seqResult(KindSeq, WayDirect, 0, false),
			run: func(ctx context.Context, _ []*benchkit.Recorder) error { return r.readDirect(ctx, r.strata) }})
	}
	trials = append(trials,
		&trial{res: r.seqResult(KindSeq, WayWarm, bs, false), files: r.warmFiles(),
			run: func(ctx context.Context, _ []*benchkit.Recorder) error { return r.readStrata(ctx, r.strata) }},
		&trial{res: r.seqResult(KindSeq, WayRaw, 0, false), files: r.rawFiles(),
			run: func(context.Context, []*benchkit.Recorder) error { return r.readRaw(r.raw) }})
	return r.alternate(ctx, r.cfg.Repeat, trials...)
}

// diskPhase is the warm and raw sequential reads again, with the files
// dropped from the OS page cache before each round: the cache's files for
// the warm reads, the raw files for the raw ones.
func (r *runner) diskPhase(ctx context.Context) error {
	dirs := r.cfg.Cluster.CacheDirs()
	switch {
	case !canDropPageCache:
		r.note("disk phase skipped: dropping files from the page cache needs Linux (amd64, arm64)")
		return nil
	case dirs == nil:
		r.note("disk phase skipped: the workers' cache directories are not known here")
		return nil
	}
	// The warm reads need every block cached, which the write (in cache
	// mode, the load after it) did, and the seq phase's last warm round
	// left so.
	bs := r.rep.Params.BlockSize
	warm := &trial{res: r.seqResult(KindDisk, WayWarm, bs, false), files: r.warmFiles(),
		prep: func(context.Context) error {
			// NB: the pages a short-circuit lease maps stay in the page
			// cache whatever fadvise says; the leases go first.
			r.c.EndLeases()
			return dropCacheFiles(dirs)
		},
		run: func(ctx context.Context, _ []*benchkit.Recorder) error { return r.readStrata(ctx, r.strata) }}
	raw := &trial{res: r.seqResult(KindDisk, WayRaw, 0, false), files: r.rawFiles(),
		prep: func(context.Context) error { return dropFiles(r.raw) },
		run:  func(context.Context, []*benchkit.Recorder) error { return r.readRaw(r.raw) }}
	return r.alternate(ctx, r.cfg.Repeat, warm, raw)
}

// dropCacheFiles drops the cache's data files from the page cache (the
// cache fdatasyncs them before it records their pages, so they are clean).
func dropCacheFiles(dirs []string) error {
	files, err := cacheFiles(dirs)
	if err != nil {
		return err
	}
	return dropFiles(files)
}

// cacheFiles lists the data files of the caches in dirs.
func cacheFiles(dirs []string) ([]string, error) {
	var files []string
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking: evicted or dropped
			}
			if err == nil && e.Type().IsRegular() && strings.HasSuffix(p, ".data") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// warmFiles and rawFiles list the local files warm and raw reads read, for
// trial.files; warmFiles is nil when the cache directories are unknown.
func (r *runner) warmFiles() func() ([]string, error) {
	dirs := r.cfg.Cluster.CacheDirs()
	if dirs == nil {
		return nil
	}
	return func() ([]string, error) { return cacheFiles(dirs) }
}

func (r *runner) rawFiles() func() ([]string, error) {
	return func() ([]string, error) { return r.raw, nil }
}

func dropFiles(paths []string) error {
	for _, p := range paths {
		if err := dropPageCache(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// eachFile runs fn for files 0..n-1 on min(Readers, n) goroutines, each
// taking the next file when done with one; the first error stops the
// others from taking more.
func (r *runner) eachFile(n int, fn func(i int, buf []byte) error) error {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range min(r.cfg.Readers, n) {
		wg.Go(func() {
			buf := make([]byte, r.cfg.IOSize)
			for i := range next {
				mu.Lock()
				failed := len(errs) > 0
				mu.Unlock()
				if failed {
					return
				}
				if err := fn(i, buf); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeStrata writes the files at paths with the pattern, blockSize 0
// meaning the service's default.
func (r *runner) writeStrata(ctx context.Context, paths []string, blockSize int64) error {
	return r.eachFile(len(paths), func(i int, _ []byte) error {
		w, err := r.c.Create(ctx, paths[i], client.CreateOptions{BlockSize: uint64(blockSize)})
		if err != nil {
			return err
		}
		for off := int64(0); off < r.cfg.FileSize; off += int64(r.cfg.IOSize) {
			if _, err := w.Write(r.pat.at(i, off, r.ioAt(off))); err != nil {
				w.Close()
				return err
			}
		}
		return w.Close()
	})
}

// ioAt is the size of the call at off: IOSize, less at the end of a file.
func (r *runner) ioAt(off int64) int { return int(min(int64(r.cfg.IOSize), r.cfg.FileSize-off)) }

// writeRaw writes the raw files: the same bytes as the Strata files,
// fsynced before the close (the bucket's local directory and the cache
// fsync theirs too).
func (r *runner) writeRaw(paths []string) error {
	return r.eachFile(len(paths), func(i int, _ []byte) error {
		f, err := os.OpenFile(paths[i], os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		for off := int64(0); off < r.cfg.FileSize; off += int64(r.cfg.IOSize) {
			if _, err := f.Write(r.pat.at(i, off, r.ioAt(off))); err != nil {
				f.Close()
				return err
			}
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// readStrata reads the Strata files at paths whole, IOSize bytes a call
// through the client's io.Reader, and checks what it read.
func (r *runner) readStrata(ctx context.Context, paths []string) error {
	return r.eachFile(len(paths), func(i int, buf []byte) error {
		rd, err := r.c.Open(ctx, paths[i])
		if err != nil {
			return err
		}
		defer rd.Close()
		return r.readAll(paths[i], i, rd, buf)
	})
}

// readRaw reads the raw files whole, as readStrata does.
func (r *runner) readRaw(paths []string) error {
	return r.eachFile(len(paths), func(i int, buf []byte) error {
		f, err := os.Open(paths[i])
		if err != nil {
			return err
		}
		defer f.Close()
		return r.readAll(paths[i], i, f, buf)
	})
}

// readAll reads file i from rd to its end, IOSize bytes a call, and checks
// the bytes and the length.
func (r *runner) readAll(name string, i int, rd io.Reader, buf []byte) error {
	var off int64
	for {
		n, err := io.ReadFull(rd, buf)
		if n > 0 {
			if cerr := r.pat.check(name, i, off, buf[:n], r.cfg.Verify); cerr != nil {
				return cerr
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s at %d: %w", name, off, err)
		}
	}
	if off != r.cfg.FileSize {
		return fmt.Errorf("databench: %s: read %d bytes, want %d", name, off, r.cfg.FileSize)
	}
	return nil
}

// dropCache empties the workers' caches before a cold round, and ends the
// client's short-circuit leases: a lease looks at its file only every
// 100 ms or so, and would read a block the cache just let go (its file
// unlinked, not yet noticed) without the bucket.
func (r *runner) dropCache(ctx context.Context) error {
	err := r.cfg.Cluster.DropCache(ctx)
	r.c.EndLeases()
	return err
}
