package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestDevServerSaysWhereItsDataLives starts the real binary's dev server and
// checks that it prints its data directory and its worker's cache limit
// before it announces itself, and that the worker's cache really has that
// capacity: a small default (1GiB), or --worker-cache-size.
func TestDevServerSaysWhereItsDataLives(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		limit string
		bytes uint64
	}{
		{"default", nil, "1.0GiB", 1 << 30},
		{"flag", []string{"--worker-cache-size", "64MiB"}, "64.0MiB", 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := testcluster.StartDev(t, dir, tc.args...)
			out := p.Stderr()
			for _, want := range []string{
				"strata: data in " + dir + " (",
				"strata: worker cache in " + filepath.Join(dir, "worker", "cache") + ": at most " + tc.limit + " ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the dev server's output lacks %q:\n%s", want, out)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			stats, err := testcluster.Client(t, p.Addr, "").WorkerStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(stats) != 1 || stats[0].Capacity != tc.bytes {
				t.Fatalf("worker stats %v: want one worker with a cache of %d bytes", stats, tc.bytes)
			}
		})
	}
}

// A dev server listening on every address hands its worker a loopback
// address to dial, one its certificate names, not the wildcard.
func TestLoopbackIfAny(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:7700":   "127.0.0.1:7700",
		"[::]:7700":      "127.0.0.1:7700",
		"127.0.0.1:7700": "127.0.0.1:7700",
		"10.1.2.3:7700":  "10.1.2.3:7700",
		"host:7700":      "host:7700",
	} {
		if got := loopbackIfAny(in); got != want {
			t.Errorf("loopbackIfAny(%s) = %s, want %s", in, got, want)
		}
	}
}
