package worker

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// sink is a Read stream that keeps what the worker sends.
type sink struct {
	grpc.ServerStream
	ctx context.Context
	got bytes.Buffer
}

func (s *sink) Send(r *pb.ReadResponse) error { s.got.Write(r.Data); return nil }
func (s *sink) Context() context.Context      { return s.ctx }

// A reader that reads one range after another is sequential and gets the
// block read on ahead; one that says it reads here and there (random:
// columnar formats, positioned reads) gets the pages it asked for and
// nothing more, however its reads follow each other: the fine page (16
// KiB) around them, not a whole page (1 MiB, before issue 42).
func TestRandomReadsFetchNothingAhead(t *testing.T) {
	const block = 8 << 20
	for _, random := range []bool{false, true} {
		store := mem.New()
		w, err := New(Config{StateDir: t.TempDir(), Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 64 << 20}}},
			OpenStore: func(context.Context, string) (object.Store, error) { return store, nil }})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		data := bytes.Repeat([]byte("columnar"), block/8)
		if _, err := store.Put(context.Background(), blocks.ObjectKey(1, 2), bytes.NewReader(data), block); err != nil {
			t.Fatal(err)
		}
		trustTest(w, map[string]string{"default": "mem://"})
		ref := &pb.BlockRef{StoreUri: "mem://", InodeId: 1, BlockId: 2, Length: block,
			BlockToken: testToken(blocktoken.Read, "default", 1, "")}
		for _, off := range []uint64{1<<20 + 10, 1<<20 + 110} { // the second follows the first
			s := &sink{ctx: context.Background()}
			if err := w.Read(&pb.ReadRequest{Block: ref, Offset: off, Length: 100, Random: random}, s); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.got.Bytes(), data[off:off+100]) {
				t.Fatal("read the wrong bytes")
			}
		}
		// A read-ahead is started, or not, before Read returns.
		aheads, fetched := w.stats.readAheads.Load(), w.stats.bucketBytesRead.Load()
		switch {
		case random && (aheads != 0 || fetched != cache.DefaultFinePageSize):
			t.Errorf("random reads started %d read-aheads and fetched %d bytes, want none and the one fine page they read",
				aheads, fetched)
		case !random && aheads == 0:
			t.Errorf("sequential reads started no read-ahead")
		}
	}
}
