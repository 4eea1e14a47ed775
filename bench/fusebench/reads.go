package fusebench

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// reads: the big file (cached by the worker when it was written) read by
// one reader and by Readers readers at once, and Files files by one reader
// each; local and through the mount, with every page cache involved
// emptied first (the local file's, the mount's, the worker's cache files').
func reads(c Config) ([]Row, error) {
	var rows []Row
	local, mount := filepath.Join(c.Local, "big"), filepath.Join(c.Mount, "big")
	for _, readers := range []int{1, c.Readers} {
		l, m, err := readBoth(c, repeat(local, readers), repeat(mount, readers))
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Op: fmt.Sprintf("sequential read, %d MiB, %d reader(s) of it", c.FileSize>>20, readers),
			Unit: "MB/s", Baseline: "local disk", Base: l, Mount: m})
	}
	size := c.FileSize / int64(c.Files)
	var ls, ms []string
	for i := range c.Files {
		name := fmt.Sprintf("part%d", i)
		if _, err := writeFile(filepath.Join(c.Local, name), size, true); err != nil {
			return nil, err
		}
		if _, err := writeFile(filepath.Join(c.Mount, name), size, false); err != nil {
			return nil, err
		}
		ls, ms = append(ls, filepath.Join(c.Local, name)), append(ms, filepath.Join(c.Mount, name))
	}
	l, m, err := readBoth(c, ls, ms)
	if err != nil {
		return nil, err
	}
	rows = append(rows, Row{Op: fmt.Sprintf("sequential read, %d files of %d MiB, a reader each", c.Files, size>>20),
		Unit: "MB/s", Baseline: "local disk", Base: l, Mount: m})
	return rows, nil
}

func repeat(p string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// leaseTTL is how long the client keeps a worker's cache file mapped
// (internal/client's short-circuit lease): its pages cannot be dropped
// before.
const leaseTTL = 2 * time.Second

// readBoth reads the local paths and the mount's, each from the disk.
func readBoth(c Config, local, mount []string) (float64, float64, error) {
	time.Sleep(leaseTTL + 500*time.Millisecond)
	for _, p := range append(append([]string{}, local...), mount...) {
		dropCache(p)
	}
	dropCache(c.Cache)
	l, err := readAll(local)
	if err != nil {
		return 0, 0, err
	}
	m, err := readAll(mount)
	c.logf("read %d file(s): local %.0f MB/s, mount %.0f MB/s", len(local), l, m)
	return l, m, err
}

// metadata: creates (of empty files), stats and reads of 4 KiB files,
// per second, from Readers threads.
func metadata(c Config) ([]Row, error) {
	var rows []Row
	data := make([]byte, 4096)
	ops := []struct {
		name string
		op   func(dir string, i int) error
	}{
		{"create (open O_CREAT, close)", func(dir string, i int) error {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("m%07d", i)))
			if err == nil {
				err = f.Close()
			}
			return err
		}},
		{"stat", func(dir string, i int) error {
			_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("m%07d", i)))
			return err
		}},
		{"write 4 KiB files", func(dir string, i int) error {
			return os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%07d", i)), data, 0o644)
		}},
		{"read 4 KiB files (open, read, close)", func(dir string, i int) error {
			_, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("s%07d", i)))
			return err
		}},
	}
	for _, o := range ops {
		var rates [2]float64
		for k, dir := range []string{filepath.Join(c.Local, "meta"), filepath.Join(c.Mount, "meta")} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			r, err := parallel(c.Readers, c.MetaOps, func(i int) error { return o.op(dir, i) })
			if err != nil {
				return nil, fmt.Errorf("%s in %s: %w", o.name, dir, err)
			}
			rates[k] = r
		}
		c.logf("%s: local %.0f/s, mount %.0f/s", o.name, rates[0], rates[1])
		rows = append(rows, Row{Op: fmt.Sprintf("%s, %d threads", o.name, c.Readers), Unit: "ops/s", Baseline: "local disk",
			Base: rates[0], Mount: rates[1]})
	}
	return rows, nil
}

// parallel runs op(0..n-1) from threads goroutines and returns ops/s.
func parallel(threads, n int, op func(int) error) (float64, error) {
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	start := time.Now()
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := t; i < n; i += threads {
				if err := op(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
