package testcluster

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/worker"
)

// ServeWorker starts a worker in the test's process, serving gRPC on
// loopback (and short-circuit reads on its Unix socket), with the
// superuser's token unless cfg has one, and returns once
// the namespace service at cfg.Meta lists it among the live workers. It is
// stopped, and its cache closed, when the test ends.
func ServeWorker(t testing.TB, cfg worker.Config) *worker.Worker {
	t.Helper()
	if cfg.Token == "" {
		cfg.Token = AdminToken(t, cfg.Meta)
	}
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done; w.Close() })
	c := Client(t, cfg.Meta, "")
	for range 1000 {
		if st, err := c.WorkerStats(ctx); err == nil && len(st) > 0 {
			for _, s := range st {
				if s.WorkerId == w.ID() {
					return w
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("worker %s did not register", w.ID())
	return nil
}

// CorruptCache flips the byte at offset at of every cache data file under
// dir that is long enough to have one, and returns how many it changed.
func CorruptCache(t testing.TB, dir string, at int64) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".data" {
			return err
		}
		if info, err := d.Info(); err != nil || info.Size() <= at {
			return err
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		b := []byte{0}
		if _, err := f.ReadAt(b, at); err != nil {
			return err
		}
		b[0] ^= 0xff
		n++
		_, err = f.WriteAt(b, at)
		return err
	})
	if err != nil {
		t.Fatalf("corrupting the cache: %v", err)
	}
	return n
}
