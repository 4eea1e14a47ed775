package fusebench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Config says what to measure where.
type Config struct {
	Local, Mount string // a local directory, and one in the mount, both empty
	// Cache is the worker's cache directory: its files' pages are dropped
	// from the kernel's page cache before a timed read, as the local
	// file's are, so that both reads come from the disk.
	Cache    string
	FileSize int64 // the big file, read and written whole
	Files    int   // files of the 8-file read (FileSize/Files each... see run)
	Readers  int
	MetaOps  int                            // creates, stats and small reads, each
	SmallTar int                            // small files in the tar archive
	Put      func(local, name string) error // strata fs -put of local, as name
	Log      io.Writer
}

// Row is one operation's figures: local and through the mount (or the
// baseline the row names), in Unit.
type Row struct {
	Op, Unit, Baseline string
	Base, Mount        float64
}

// Run measures every row.
func Run(cfg Config) ([]Row, error) {
	var rows []Row
	steps := []func(Config) ([]Row, error){writes, reads, metadata, untar}
	for _, step := range steps {
		r, err := step(cfg)
		if err != nil {
			return rows, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

const ioSize = 1 << 20

// writeFile writes size pseudo-random bytes to path in 1 MiB writes and
// closes it (the mount commits at close), returning MB/s.
func writeFile(path string, size int64, sync bool) (float64, error) {
	buf := make([]byte, ioSize)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	start := time.Now()
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	for off := int64(0); off < size; off += ioSize {
		buf[0]++
		if _, err := f.Write(buf[:min(ioSize, size-off)]); err != nil {
			f.Close()
			return 0, err
		}
	}
	if sync {
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return mbps(size, time.Since(start)), nil
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// writes: the same local file (dropped from the page cache first) copied
// into the mount in 1 MiB writes, as cp does, and put by strata fs -put:
// both read the source from the disk and write it through the workers.
// Then the big file written from memory, through the mount and to the
// local disk (fsynced), for scale.
func writes(c Config) ([]Row, error) {
	src := filepath.Join(c.Local, "big")
	local, err := writeFile(src, c.FileSize, true)
	if err != nil {
		return nil, err
	}
	dropCache(src)
	start := time.Now()
	if err := c.Put(src, "/put"); err != nil {
		return nil, err
	}
	put := mbps(c.FileSize, time.Since(start))
	dropCache(src)
	cp, err := copyFile(src, filepath.Join(c.Mount, "copy"))
	if err != nil {
		return nil, err
	}
	mount, err := writeFile(filepath.Join(c.Mount, "big"), c.FileSize, false)
	if err != nil {
		return nil, err
	}
	c.logf("write: local %.0f MB/s, fs -put %.0f MB/s, cp into the mount %.0f MB/s, mount %.0f MB/s", local, put, cp, mount)
	mib := c.FileSize >> 20
	return []Row{
		{Op: fmt.Sprintf("sequential write, cp of a local %d MiB file", mib), Unit: "MB/s", Baseline: "strata fs -put", Base: put, Mount: cp},
		{Op: fmt.Sprintf("sequential write from memory, %d MiB", mib), Unit: "MB/s", Baseline: "local disk (fsync)", Base: local, Mount: mount},
	}, nil
}

// copyFile copies src to dst in 1 MiB reads and writes and closes dst
// (the mount commits at close), returning MB/s.
func copyFile(src, dst string) (float64, error) {
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, ioSize))
	if err != nil {
		out.Close()
		return 0, err
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	return mbps(n, time.Since(start)), nil
}

// readAll reads paths, one reader per entry, whole and in 1 MiB reads,
// and returns the MB/s of all together.
func readAll(paths []string) (float64, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int64
	var firstErr error
	start := time.Now()
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := readOne(p)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return mbps(total, time.Since(start)), firstErr
}

func readOne(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, ioSize)
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// dropCache drops path's pages (or every file's under a directory) from
// the kernel's page cache.
func dropCache(path string) {
	filepath.Walk(path, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if f, err := os.Open(p); err == nil {
				fadviseDontNeed(f)
				f.Close()
			}
		}
		return nil
	})
}

func fadviseDontNeed(f *os.File) {
	const dontNeed = 4
	syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, dontNeed, 0, 0)
}

// untar extracts an archive of many small files into each directory.
func untar(c Config) ([]Row, error) {
	if c.SmallTar == 0 {
		return nil, nil
	}
	src := filepath.Join(c.Local, "tarsrc")
	for i := range c.SmallTar {
		dir := filepath.Join(src, fmt.Sprintf("d%03d", i%100))
		if i < 100 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d", i)), make([]byte, 1+i%2048), 0o644); err != nil {
			return nil, err
		}
	}
	archive := filepath.Join(c.Local, "small.tar")
	if out, err := exec.Command("tar", "-C", src, "-cf", archive, ".").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tar -c: %v: %s", err, out)
	}
	var secs [2]float64
	for i, dir := range []string{filepath.Join(c.Local, "untar"), filepath.Join(c.Mount, "untar")} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		start := time.Now()
		if out, err := exec.Command("tar", "-C", dir, "-xf", archive).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tar -x into %s: %v: %s", dir, err, out)
		}
		if i == 0 {
			exec.Command("sync").Run()
		}
		secs[i] = time.Since(start).Seconds()
		c.logf("tar -x of %d files into %s: %.1f s", c.SmallTar, dir, secs[i])
	}
	return []Row{{Op: fmt.Sprintf("tar -x, %d files of 1 B-2 KiB", c.SmallTar), Unit: "files/s", Baseline: "local disk",
		Base: float64(c.SmallTar) / secs[0], Mount: float64(c.SmallTar) / secs[1]}}, nil
}
