package objtest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

func uploadPart(t *testing.T, ms object.Store, u object.Upload, num int, data []byte) object.Part {
	t.Helper()
	p, err := ms.UploadPart(context.Background(), u, num, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("UploadPart(%d): %v", num, err)
	}
	if p.Num != num || p.Size != int64(len(data)) {
		t.Fatalf("UploadPart(%d) = %+v", num, p)
	}
	return p
}

func testMultipart(t *testing.T, ms object.Store) {
	ctx := context.Background()
	p1, p2 := Data(20, object.MinPartSize), Data(21, 1000)
	u, err := ms.CreateMultipart(ctx, "mp/obj")
	if err != nil {
		t.Fatal(err)
	}
	// Out of order, and part 2 twice: re-uploading a part is idempotent.
	parts := []object.Part{{}, uploadPart(t, ms, u, 2, p2)}
	parts[1] = uploadPart(t, ms, u, 2, p2)
	parts[0] = uploadPart(t, ms, u, 1, p1)

	_, err = ms.Head(ctx, "mp/obj")
	wantErr(t, "Head before Complete", err, object.ErrNotFound)
	if got := list(t, ms, "mp/", "", 0); len(got) != 0 {
		t.Fatalf("List before Complete = %q", got)
	}
	// Completes that break S3's rules fail and leave the upload as it was.
	p3 := uploadPart(t, ms, u, 3, p2)
	wrongTag := parts[1]
	wrongTag.ETag = "0123"
	for what, bad := range map[string][]object.Part{
		"out of order":          {parts[1], parts[0]},
		"a small part not last": {parts[1], p3},
		"a wrong ETag":          {parts[0], wrongTag},
		"no parts":              nil,
	} {
		_, err := ms.CompleteMultipart(ctx, u, bad)
		if err == nil || errors.Is(err, object.ErrNotFound) {
			t.Fatalf("Complete with %s: %v", what, err)
		}
	}
	checkUploads(t, ms, "mp/obj", u)
	info, err := ms.CompleteMultipart(ctx, u, parts)
	want := append(p1, p2...)
	if err != nil || info.Key != "mp/obj" || info.Size != int64(len(want)) || info.ETag == "" {
		t.Fatalf("CompleteMultipart = %+v, %v", info, err)
	}
	wantEqual(t, "Get after Complete", get(t, ms, "mp/obj", 0, -1), want)
	off := int64(object.MinPartSize - 10)
	wantEqual(t, "Get across parts", get(t, ms, "mp/obj", off, 20), want[off:off+20])
	if head, err := ms.Head(ctx, "mp/obj"); err != nil || head.Size != info.Size || head.ETag != info.ETag {
		t.Fatalf("Head = %+v, %v; Complete said %+v", head, err, info)
	}
}

func testMultipartAbort(t *testing.T, ms object.Store) {
	ctx := context.Background()
	u, err := ms.CreateMultipart(ctx, "mp/aborted")
	if err != nil {
		t.Fatal(err)
	}
	p := uploadPart(t, ms, u, 1, Data(22, 100))
	for range 2 { // idempotent
		if err := ms.AbortMultipart(ctx, u); err != nil {
			t.Fatalf("AbortMultipart: %v", err)
		}
	}
	_, err = ms.Head(ctx, "mp/aborted")
	wantErr(t, "Head after Abort", err, object.ErrNotFound)
	_, err = ms.CompleteMultipart(ctx, u, []object.Part{p})
	wantErr(t, "Complete after Abort", err, object.ErrNotFound)
}

func testPutParallel(t *testing.T, s object.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		size int
	}{
		{"small", 1000},                         // one Put everywhere
		{"parts", 2*object.MinPartSize + 12345}, // three parts where multipart exists
	} {
		data := Data(23, tc.size)
		o := object.ParallelOptions{PartSize: object.MinPartSize, Concurrency: 3}
		if err := object.PutParallel(ctx, s, "pp/"+tc.name, bytes.NewReader(data), int64(len(data)), o); err != nil {
			t.Fatalf("PutParallel(%s): %v", tc.name, err)
		}
		wantEqual(t, "Get after PutParallel "+tc.name, get(t, s, "pp/"+tc.name, 0, -1), data)
	}
}
