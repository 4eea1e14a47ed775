package metaserver

import (
	"testing"
	"time"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Deleted blocks reach each live worker once, at most droppedPerHeartbeat
// per heartbeat, and a worker's queue keeps only the newest maxDropped.
func TestDroppedBlocksReachEachWorkerOnce(t *testing.T) {
	var r workerRegistry
	now := time.Unix(1000, 0)
	for _, id := range []string{"w1", "w2"} {
		if got := r.heartbeat(&pb.WorkerInfo{Id: id}, now); len(got) != 0 {
			t.Fatalf("%s: %d blocks to drop before any was deleted", id, len(got))
		}
	}
	refs := func(from, n int) []*pb.BlockRef {
		out := make([]*pb.BlockRef, n)
		for i := range out {
			out[i] = &pb.BlockRef{InodeId: 1, BlockId: uint64(from + i)}
		}
		return out
	}
	r.drop(refs(1, 3))
	for _, id := range []string{"w1", "w2"} {
		if got := r.heartbeat(&pb.WorkerInfo{Id: id}, now); len(got) != 3 || got[0].BlockId != 1 || got[2].BlockId != 3 {
			t.Fatalf("%s: %v", id, got)
		}
		if got := r.heartbeat(&pb.WorkerInfo{Id: id}, now); len(got) != 0 {
			t.Fatalf("%s heard of %d blocks twice", id, len(got))
		}
	}
	r.drop(refs(1, maxDropped+5))
	var heard []*pb.BlockRef
	for range maxDropped/droppedPerHeartbeat + 1 {
		got := r.heartbeat(&pb.WorkerInfo{Id: "w1"}, now)
		if len(got) > droppedPerHeartbeat {
			t.Fatalf("one heartbeat carried %d blocks", len(got))
		}
		heard = append(heard, got...)
	}
	if len(heard) != maxDropped || heard[0].BlockId != 6 {
		t.Fatalf("heard %d blocks from %d on, want the newest %d", len(heard), heard[0].BlockId, maxDropped)
	}
}
