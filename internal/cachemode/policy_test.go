package cachemode_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// An object overwritten, added or deleted behind Strata's back is seen as
// the sync interval says: at once with 0, once the interval has passed
// with N, only after a resync with -1. Data is never served for another
// version than the one the namespace holds.
func TestSyncPolicies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval int64
		// pass makes what the policy waits for happen: time, or a resync.
		pass func(t *testing.T, l *lake)
	}{
		{"always", 0, func(*testing.T, *lake) {}},
		{"60s", 60, func(_ *testing.T, l *lake) { l.clock.advance(61 * time.Second) }},
		{"never", -1, func(t *testing.T, l *lake) {
			if _, err := l.c.Resync(context.Background(), "strata://lake/"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, backend string) {
				l := startLake(t, backend, lakeOptions{interval: tc.interval})
				ctx := context.Background()
				l.put(t, "d/keep", []byte("v1"))
				l.put(t, "d/gone", []byte("x"))
				if got := l.names(t, "/d"); !slices.Equal(got, []string{"gone", "keep"}) {
					t.Fatalf("first listing %q", got)
				}
				if got := l.read(t, "/d/keep"); string(got) != "v1" {
					t.Fatalf("first read %q", got)
				}
				l.put(t, "d/keep", []byte("version two"))
				l.put(t, "d/new", nil)
				if err := l.bucket.Delete(ctx, "d/gone"); err != nil {
					t.Fatal(err)
				}
				if tc.interval != 0 {
					// Not yet: the old listing and version stand, and the
					// cached bytes of v1 are still v1's.
					if got := l.names(t, "/d"); !slices.Equal(got, []string{"gone", "keep"}) {
						t.Fatalf("before the policy allows, listing %q", got)
					}
					st, err := l.c.Stat(ctx, "strata://lake/d/keep")
					if err != nil || st.Length != 2 {
						t.Fatalf("before the policy allows, stat %+v %v", st, err)
					}
					if got := l.read(t, "/d/keep"); string(got) != "v1" {
						t.Fatalf("before the policy allows, read %q", got)
					}
				}
				tc.pass(t, l)
				if got := l.names(t, "/d"); !slices.Equal(got, []string{"keep", "new"}) {
					t.Fatalf("after, listing %q", got)
				}
				if got := l.read(t, "/d/keep"); string(got) != "version two" {
					t.Fatalf("after, read %q", got)
				}
				if _, err := l.c.Stat(ctx, "strata://lake/d/gone"); !errors.Is(err, fserr.ErrNotFound) {
					t.Fatalf("after, stat of the deleted object: %v", err)
				}
			})
		})
	}
}

// A reader that opened a file before its object changed never gets bytes
// of the new version for the old: what the cache does not hold of the old
// version fails with ErrChanged. Opened again, it reads the new version.
func TestChangedObjectIsNeverMixed(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: 0})
		ctx := context.Background()
		old := randomBytes(t, 5<<20)
		l.put(t, "f", old)
		r, err := l.c.Open(ctx, "strata://lake/f")
		if err != nil {
			t.Fatal(err)
		}
		fresh := randomBytes(t, 5<<20)
		l.put(t, "f", fresh)
		buf := make([]byte, 1<<20)
		if _, err := r.ReadAt(buf, 0); !errors.Is(err, fserr.ErrChanged) {
			t.Fatalf("a read of the old version after the change: %v", err)
		}
		if got := l.read(t, "/f"); !bytes.Equal(got, fresh) {
			t.Fatal("a new open does not read the new version")
		}
	})
}

// A cached read on the same host moves no byte over the worker's RPC, and
// a second read fetches nothing from the bucket.
func TestCachedReadsAreShortCircuit(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: -1})
		data := randomBytes(t, 9<<20)
		l.put(t, "big", data)
		if got := l.read(t, "/big"); !bytes.Equal(got, data) {
			t.Fatal("cold read differs")
		}
		before := workerStats(t, l)
		if got := l.read(t, "/big"); !bytes.Equal(got, data) {
			t.Fatal("warm read differs")
		}
		after := workerStats(t, l)
		if after.RpcBytesRead != before.RpcBytesRead || after.BucketBytesRead != before.BucketBytesRead {
			t.Fatalf("a warm read moved %d bytes over RPC and %d from the bucket",
				after.RpcBytesRead-before.RpcBytesRead, after.BucketBytesRead-before.BucketBytesRead)
		}
		if before.BucketBytesRead < uint64(len(data)) || before.ShortCircuitBytes == 0 {
			t.Fatalf("the cold read fetched %d bytes from the bucket, lent %d short-circuit",
				before.BucketBytesRead, before.ShortCircuitBytes)
		}
	})
}

// A page corrupted in the cache is dropped and fetched again: the reader
// gets the object's bytes.
func TestCorruptCachePageIsRefetched(t *testing.T) {
	l := startLake(t, "localfs", lakeOptions{interval: -1})
	data := randomBytes(t, 3<<20)
	l.put(t, "f", data)
	if got := l.read(t, "/f"); !bytes.Equal(got, data) {
		t.Fatal("cold read differs")
	}
	if testcluster.CorruptCache(t, l.cacheDir, 1<<20+5) == 0 {
		t.Fatal("no cache file to corrupt")
	}
	if got := l.read(t, "/f"); !bytes.Equal(got, data) {
		t.Fatal("a corrupted page was returned")
	}
	if st := workerStats(t, l); st.Corruptions == 0 {
		t.Fatal("the corruption went unnoticed")
	}
}

func workerStats(t *testing.T, l *lake) *pb.WorkerStats {
	t.Helper()
	st, err := l.c.WorkerStats(context.Background())
	if err != nil || len(st) != 1 {
		t.Fatalf("worker stats %v %v", st, err)
	}
	return st[0]
}

// A storm of 503s and broken reads between the worker and the bucket costs
// time, never bytes: every read is the object's.
func TestFaultStormGivesRightBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		inj := faulty.NewInjector(7)
		l := startLake(t, backend, lakeOptions{interval: -1,
			wrap: func(s object.Store) object.Store { return faulty.New(s, inj) }})
		data := randomBytes(t, 6<<20+3)
		l.put(t, "f", data)
		inj.Set(faulty.Rule{Kind: faulty.Throttle, Ops: []object.Op{object.OpGet}, Prob: 0.3},
			faulty.Rule{Kind: faulty.ShortRead, Ops: []object.Op{object.OpGet}, Prob: 0.3})
		if got := l.read(t, "/f"); !bytes.Equal(got, data) {
			t.Fatal("a read through the storm differs")
		}
		if inj.Fired() == 0 {
			t.Fatal("no fault fired")
		}
	})
}

// A dead worker costs its cache, never the read: its blocks are read
// through the next worker in rendezvous order.
func TestDeadWorkerIsReadAround(t *testing.T) {
	l := startLake(t, "localfs", lakeOptions{interval: -1, blockSize: 1 << 20})
	other := testcluster.StartWorker(t, l.svc.Addr, t.TempDir(), "--cache-size", "256MiB")
	ctx := context.Background()
	for {
		if st, err := l.c.WorkerStats(ctx); err == nil && len(st) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling for the worker's registration
	}
	data := randomBytes(t, 16<<20)
	l.put(t, "f", data)
	if got := l.read(t, "/f"); !bytes.Equal(got, data) {
		t.Fatal("read with two workers differs")
	}
	// 1 MiB blocks: both workers are home to some of the sixteen (all on
	// one has a chance of 2^-15).
	st, err := l.c.WorkerStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.BucketBytesRead == 0 {
			t.Fatalf("worker %s read nothing: the test needs blocks homed on both", s.WorkerId)
		}
	}
	other.Kill()
	if got := l.read(t, "/f"); !bytes.Equal(got, data) {
		t.Fatal("read after a worker died differs")
	}
}
