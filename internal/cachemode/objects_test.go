package cachemode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Objects another client put are files at their keys, prefixes and
// markers directories; they read back byte for byte.
func TestObjectsOfOtherClientsAreFiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: -1})
		big := randomBytes(t, 3<<20+7)
		l.put(t, "tables/sales/part-0.parquet", big)
		l.put(t, "tables/sales/_SUCCESS", nil)
		l.put(t, "tables/empty/", nil) // a directory marker
		l.put(t, "2026-11-26T10:00:00.log", []byte("colons are fine in keys"))
		if got := l.names(t, "/"); !slices.Equal(got, []string{"2026-11-26T10:00:00.log", "tables/"}) {
			t.Fatalf("root: %q", got)
		}
		if got := l.names(t, "/tables"); !slices.Equal(got, []string{"empty/", "sales/"}) {
			t.Fatalf("tables: %q", got)
		}
		if got := l.names(t, "/tables/empty"); len(got) != 0 {
			t.Fatalf("a marker's directory lists %q", got)
		}
		if got := l.read(t, "/tables/sales/part-0.parquet"); !bytes.Equal(got, big) {
			t.Fatalf("read back %d bytes, not the %d put", len(got), len(big))
		}
		if got := l.read(t, "/2026-11-26T10:00:00.log"); string(got) != "colons are fine in keys" {
			t.Fatalf("read back %q", got)
		}
		st, err := l.c.Stat(context.Background(), "strata://lake/tables/sales/_SUCCESS")
		if err != nil || st.IsDir || st.Length != 0 {
			t.Fatalf("stat of an empty object: %+v %v", st, err)
		}
		if _, err := l.c.Stat(context.Background(), "strata://lake/tables/nothing"); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("stat of nothing: %v", err)
		}
	})
}

// What Strata writes is a plain object at the file's key, byte for byte,
// whatever its size: inline-small, one multipart part and one byte more,
// many parts.
func TestFilesWrittenAreObjects(t *testing.T) {
	sizes := map[string]int{"0B": 0, "1B": 1, "4KiB+1": 4097, "part+1": 16<<20 + 1}
	if !testing.Short() {
		sizes["200MiB"] = 200 << 20
	}
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: -1})
		ctx := context.Background()
		if _, err := l.c.Mkdirs(ctx, "strata://lake/out", 0o755); err != nil {
			t.Fatal(err)
		}
		for name, n := range sizes {
			data := randomBytes(t, n)
			w, err := l.c.Create(ctx, "strata://lake/out/"+name, client.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < len(data); off += 1 << 20 {
				if _, err := w.Write(data[off:min(off+1<<20, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := l.object(t, "out/"+name); sum(got) != sum(data) {
				t.Fatalf("%s: the object has %d bytes, sha256 %s; wrote %d, %s", name, len(got), sum(got), n, sum(data))
			}
			if got := l.read(t, "/out/"+name); sum(got) != sum(data) {
				t.Fatalf("%s: read back through Strata differs", name)
			}
			// NB: by key: MinIO lists the uploads of one key only.
			if ups, err := l.bucket.ListUploads(ctx, "out/"+name); err != nil || len(ups) != 0 {
				t.Fatalf("%s: uploads left behind: %v %v", name, ups, err)
			}
		}
		if _, err := l.bucket.Head(ctx, "out/"); err != nil {
			t.Fatalf("mkdir put no marker: %v", err)
		}
	})
}

// A writer that dies mid-write leaves no object and no upload behind: its
// worker aborts the upload when the stream breaks.
func TestKilledWriterLeavesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: -1})
		wctx, kill := context.WithCancel(context.Background())
		w, err := l.c.Create(wctx, "strata://lake/dying.bin", client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data := randomBytes(t, 1<<20)
		for range 40 { // more than two parts
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
		}
		kill() // the writer is gone, without a Close
		ctx := context.Background()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ups, err := l.bucket.ListUploads(ctx, "dying.bin")
			if err != nil {
				t.Fatal(err)
			}
			if len(ups) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("uploads still in progress 30s after the writer died: %v", ups)
			}
			time.Sleep(20 * time.Millisecond) // polling the bucket for the worker's abort
		}
		if _, err := l.bucket.Head(ctx, "dying.bin"); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("an object is there: %v", err)
		}
		// Lease recovery ends the file: it never was.
		if _, err := l.c.RecoverLease(ctx, "strata://lake/dying.bin"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.c.Stat(ctx, "strata://lake/dying.bin"); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("after recovery: %v", err)
		}
	})
}

// mkdir, delete and rename do in the bucket what S3A does: markers, object
// deletes, copies then deletes.
func TestMutationsInTheBucket(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l := startLake(t, backend, lakeOptions{interval: -1})
		ctx := context.Background()
		a := randomBytes(t, 100)
		l.put(t, "dir/a", a)
		l.put(t, "dir/sub/b", []byte("b"))
		if _, err := l.c.Rename(ctx, "strata://lake/dir", "strata://lake/moved"); err != nil {
			t.Fatal(err)
		}
		if got := l.object(t, "moved/a"); !bytes.Equal(got, a) {
			t.Fatal("moved/a differs")
		}
		if string(l.object(t, "moved/sub/b")) != "b" {
			t.Fatal("moved/sub/b differs")
		}
		for _, gone := range []string{"dir/a", "dir/sub/b"} {
			if _, err := l.bucket.Head(ctx, gone); !errors.Is(err, object.ErrNotFound) {
				t.Fatalf("%s is still there: %v", gone, err)
			}
		}
		if got := l.read(t, "/moved/a"); !bytes.Equal(got, a) {
			t.Fatal("moved/a reads back otherwise")
		}
		// A file renamed onto a new name within its directory.
		if _, err := l.c.Rename(ctx, "strata://lake/moved/a", "strata://lake/moved/c"); err != nil {
			t.Fatal(err)
		}
		if got := l.read(t, "/moved/c"); !bytes.Equal(got, a) {
			t.Fatal("moved/c reads back otherwise")
		}
		// Deleting the last file keeps its directory, by its marker.
		if _, err := l.c.Delete(ctx, "strata://lake/moved/c", false); err != nil {
			t.Fatal(err)
		}
		if _, err := l.bucket.Head(ctx, "moved/c"); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("moved/c is still there: %v", err)
		}
		if _, err := l.c.Delete(ctx, "strata://lake/moved", false); !errors.Is(err, fserr.ErrNotEmpty) {
			t.Fatalf("a non-recursive delete of a directory with a subdirectory: %v", err)
		}
		if string(l.object(t, "moved/sub/b")) != "b" {
			t.Fatal("a refused delete deleted objects")
		}
		if _, err := l.c.Delete(ctx, "strata://lake/moved", true); err != nil {
			t.Fatal(err)
		}
		left, err := l.bucket.List(ctx, "", "", 0)
		if err != nil || len(left) != 0 {
			t.Fatalf("after rm -r, the bucket holds %v %v", left, err)
		}
	})
}

// A rename of a directory reports how many of its objects it copied and
// deleted while it runs.
func TestRenameReportsProgress(t *testing.T) {
	inj := faulty.NewInjector(3)
	l := startLake(t, "localfs", lakeOptions{interval: -1,
		wrapService: func(s object.Store) object.Store { return faulty.New(s, inj) }})
	ctx := context.Background()
	for i := range 200 {
		l.put(t, fmt.Sprintf("d/%03d", i), []byte("x"))
	}
	if got := l.names(t, "/d"); len(got) != 200 {
		t.Fatalf("%d entries", len(got))
	}
	// Copies slowed, so that the rename lasts long enough to be seen.
	inj.Set(faulty.Rule{Kind: faulty.Latency, Ops: []object.Op{object.OpCopy}, Delay: 20 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := l.c.Rename(ctx, "strata://lake/d", "strata://lake/e")
		done <- err
	}()
	var seen *pb.GetProgressResponse
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			p, err := l.c.Progress(ctx, "strata://lake/d")
			if err != nil {
				t.Fatal(err)
			}
			if p.Running && p.Done > 0 {
				seen = p
			}
		}
	}
	if seen == nil || seen.Total < 200 || seen.Operation == "" {
		t.Fatalf("progress seen while renaming: %v", seen)
	}
	if p, err := l.c.Progress(ctx, "strata://lake/d"); err != nil || p.Running {
		t.Fatalf("progress after the rename: %v %v", p, err)
	}
}
