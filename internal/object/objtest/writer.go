package objtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
)

var writerTests = []test{
	{"Writer", testWriter},
	{"WriterAbort", testWriterAbort},
	{"WriterFailure", testWriterFailure},
}

const writerPart = object.MinPartSize

// writeChunks writes data to w in chunks of an odd size, so that part
// boundaries fall inside Writes.
func writeChunks(t testing.TB, w *object.Writer, data []byte) {
	t.Helper()
	for len(data) > 0 {
		n := min(len(data), 300_007)
		if m, err := w.Write(data[:n]); err != nil || m != n {
			t.Fatalf("Write of %d bytes = %d, %v", n, m, err)
		}
		data = data[n:]
	}
}

// countParts wraps s so that the parts uploaded through it can be counted:
// a Latency rule of zero fires without delaying.
func countParts(s object.Store) (object.Store, *faulty.Injector) {
	in := faulty.NewInjector(1)
	in.Set(faulty.Rule{Kind: faulty.Latency, Ops: []object.Op{object.OpUploadPart}})
	return faulty.New(s, in), in
}

// The streaming writer stores objects of every size around a part's, as one
// Put up to one part and as a multipart upload above.
func testWriter(t *testing.T, s object.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		size  int
		parts int64 // parts uploaded, 0 for a single Put
	}{
		{0, 0}, {1, 0}, {writerPart, 0}, {writerPart + 1, 2}, {3*writerPart + 12345, 4},
	} {
		key := fmt.Sprintf("w/%d", tc.size)
		data := Data(uint64(90+tc.size), tc.size)
		cs, in := countParts(s)
		w := object.NewWriter(ctx, cs, key, object.WriterOptions{PartSize: writerPart, Concurrency: 2})
		writeChunks(t, w, data)
		if tc.parts > 0 {
			_, err := s.Head(ctx, key)
			wantErr(t, "Head before Close", err, object.ErrNotFound)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close of %d bytes: %v", tc.size, err)
		}
		head, err := s.Head(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		sameVersion(t, fmt.Sprintf("Writer.Info of %d bytes", tc.size), w.Info(), head)
		wantEqual(t, fmt.Sprintf("object of %d bytes written by a Writer", tc.size), get(t, s, key, 0, -1), data)
		if in.Fired() != tc.parts {
			t.Errorf("%d bytes went in %d parts, want %d", tc.size, in.Fired(), tc.parts)
		}
		if ups := listUploads(t, s, key); len(ups) != 0 {
			t.Fatalf("uploads left after Close: %+v", ups)
		}
		if _, err := w.Write([]byte("x")); err == nil {
			t.Fatal("Write after Close succeeded")
		}
		if err := w.Abort(); err != nil {
			t.Fatalf("Abort after Close: %v", err)
		}
		wantEqual(t, "object after Abort after Close", get(t, s, key, 0, -1), data)
	}
}

// Abort leaves no object and no upload behind, at any point.
func testWriterAbort(t *testing.T, s object.Store) {
	ctx := context.Background()
	old := put(t, s, "wa/old", []byte("old"))
	for _, size := range []int{0, 10, writerPart + 1, 2*writerPart + 7} {
		for _, key := range []string{"wa/new", "wa/old"} {
			w := object.NewWriter(ctx, s, key, object.WriterOptions{PartSize: writerPart})
			writeChunks(t, w, Data(uint64(size), size))
			for range 2 { // idempotent
				if err := w.Abort(); err != nil {
					t.Fatalf("Abort after %d bytes: %v", size, err)
				}
			}
			if _, err := w.Write([]byte("x")); err == nil {
				t.Fatal("Write after Abort succeeded")
			}
			if err := w.Close(); err == nil {
				t.Fatal("Close after Abort succeeded")
			}
		}
		headMissing(t, s, "wa/new")
		head, err := s.Head(ctx, "wa/old")
		if err != nil {
			t.Fatal(err)
		}
		sameVersion(t, "an object whose overwrite was aborted", head, old)
		for _, key := range []string{"wa/new", "wa/old"} {
			if ups := listUploads(t, s, key); len(ups) != 0 {
				t.Fatalf("uploads left after Abort of %d bytes: %+v", size, ups)
			}
		}
	}
}

// A part that fails fails the Writer; Close then aborts, leaving nothing.
func testWriterFailure(t *testing.T, s object.Store) {
	ctx := context.Background()
	boom := errors.New("boom")
	in := faulty.NewInjector(1)
	in.Set(faulty.Rule{Kind: faulty.Error, Err: boom, Ops: []object.Op{object.OpUploadPart}, Every: 2, Times: 1})
	w := object.NewWriter(ctx, faulty.New(s, in), "wf", object.WriterOptions{PartSize: writerPart, Concurrency: 1})
	data := Data(100, 4*writerPart)
	var err error
	for off := 0; off < len(data) && err == nil; off += 1 << 20 {
		_, err = w.Write(data[off : off+1<<20])
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	wantErr(t, "Writer with a failing part", err, boom)
	headMissing(t, s, "wf")
	if ups := listUploads(t, s, "wf"); len(ups) != 0 {
		t.Fatalf("uploads left after a failed Writer: %+v", ups)
	}
}
