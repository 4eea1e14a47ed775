package upkeep_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/metaserver/memreplica"
	"github.com/stratafs/strata/internal/metaserver/upkeep"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newReplica() *memreplica.Replica {
	return memreplica.New(statemachine.DefaultConfig("root"), time.Unix(1_000_000, 0))
}

func propose(t *testing.T, r *memreplica.Replica, cmd *pb.Command) statemachine.Result {
	t.Helper()
	res, err := r.Propose(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var root = &pb.Header{User: "root", ClientName: "c"}

// mkTree makes n files under /d, each with one block.
func mkTree(t *testing.T, r *memreplica.Replica, n int) []uint64 {
	t.Helper()
	var inodes []uint64
	for i := range n {
		p := fmt.Sprintf("/d/f%d", i)
		res := propose(t, r, statemachine.Create.Command(&pb.CreateRequest{Header: root, Path: p, Permission: 0o644,
			CreateParents: true}))
		ino := statemachine.Create.Result(res).ID
		propose(t, r, statemachine.Complete.Command(&pb.CompleteRequest{Header: root, Path: p, InodeId: ino, Length: 10,
			Blocks: []*pb.Block{{BlockId: uint64(100 + i), Length: 10}}}))
		inodes = append(inodes, ino)
	}
	return inodes
}

func pending(t *testing.T, r *memreplica.Replica, fn func(kv.Reader) (bool, error)) bool {
	t.Helper()
	var left bool
	if err := r.Applied(func(rd kv.Reader) (err error) { left, err = fn(rd); return err }); err != nil {
		t.Fatal(err)
	}
	return left
}

// The purge removes a deleted tree in commands of at most its batch, until
// nothing detached is left; a member that does not lead leaves it.
func TestPurgeDrainsDeletedTrees(t *testing.T) {
	r := newReplica()
	mkTree(t, r, 25)
	propose(t, r, statemachine.Delete.Command(&pb.DeleteRequest{Header: root, Path: "/d", Recursive: true}))
	if !pending(t, r, statemachine.PurgePending) {
		t.Fatal("nothing to purge after a recursive delete")
	}
	r.SetLeader(false)
	if err := upkeep.Purge(r, 10)(context.Background()); err != nil || !pending(t, r, statemachine.PurgePending) {
		t.Fatalf("a follower purged (%v)", err)
	}
	r.SetLeader(true)
	if err := upkeep.Purge(r, 10)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pending(t, r, statemachine.PurgePending) {
		t.Fatal("detached inodes left after the purge")
	}
}

// The collector deletes each garbage block's object and tells the workers;
// an entry whose bucket cannot be opened is dropped, its objects left.
func TestCollectorDeletesGarbageBlocks(t *testing.T) {
	r := newReplica()
	inodes := mkTree(t, r, 3)
	store := mem.New()
	for i, ino := range inodes {
		if _, err := store.Put(context.Background(), blocks.ObjectKey(ino, uint64(100+i)), strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	propose(t, r, statemachine.Delete.Command(&pb.DeleteRequest{Header: root, Path: "/d", Recursive: true}))
	if err := upkeep.Purge(r, 100)(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []*pb.BlockRef
	c := &upkeep.Collector{Replica: r, Buckets: buckets{"file:///nowhere": store}, Log: quiet,
		Deleted: func(refs []*pb.BlockRef) { mu.Lock(); told = append(told, refs...); mu.Unlock() }}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := store.List(context.Background(), "", "", 10); len(left) != 0 || len(told) != 3 {
		t.Fatalf("objects left: %v; workers told of %d blocks", left, len(told))
	}
	var queued []statemachine.GarbageItem
	_ = r.Applied(func(rd kv.Reader) (err error) { queued, err = statemachine.GarbageBatch(rd, 10); return err })
	if len(queued) != 0 {
		t.Fatalf("%d garbage entries left", len(queued))
	}
}

type buckets map[string]object.Store

func (b buckets) Get(_ context.Context, uri string) (object.Store, error) {
	if s, ok := b[uri]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("no bucket %s", uri)
}

// Kept answers older than RequestMemory are forgotten; newer ones stay.
func TestForgetRequests(t *testing.T) {
	r := newReplica()
	h := &pb.Header{User: "root", RequestId: []byte("rid-1"), FirstAttempt: true}
	propose(t, r, statemachine.Mkdirs.Command(&pb.MkdirsRequest{Header: h, Path: "/a", Permission: 0o755}))
	old := func(rd kv.Reader) (bool, error) {
		return statemachine.RequestsBefore(rd, r.Now().Add(-upkeep.RequestMemory).UnixMilli())
	}
	forget := upkeep.ForgetRequests(r)
	if err := forget(context.Background()); err != nil || pending(t, r, func(rd kv.Reader) (bool, error) {
		return statemachine.RequestsBefore(rd, r.Now().Add(time.Minute).UnixMilli())
	}) == false {
		t.Fatalf("a fresh answer was forgotten (%v)", err)
	}
	r.Advance(upkeep.RequestMemory + 2*time.Minute)
	if err := forget(context.Background()); err != nil || pending(t, r, old) {
		t.Fatalf("an old answer was kept (%v)", err)
	}
}

// A namespace in the trash is removed once its time there is over.
func TestPurgeNamespacesOnceTheirTimeIsOver(t *testing.T) {
	r := newReplica()
	propose(t, r, statemachine.CreateNamespace.Command(&pb.CreateNamespaceRequest{Header: root,
		Namespace: &pb.NamespaceInfo{Name: "lake", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file:///lake"}}))
	lake := &pb.Header{User: "root", ClientName: "c", Namespace: "lake"}
	propose(t, r, statemachine.Mkdirs.Command(&pb.MkdirsRequest{Header: lake, Path: "/x", Permission: 0o755}))
	propose(t, r, statemachine.DeleteNamespace.Command(&pb.DeleteNamespaceRequest{Header: root, Name: "lake",
		Mode: pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH}))
	job := upkeep.PurgeNamespaces(r, quiet)
	count := func() int {
		var list []*kvschema.Namespace
		_ = r.Applied(func(rd kv.Reader) (err error) { list, err = statemachine.Namespaces(rd); return err })
		return len(list)
	}
	if err := job(context.Background()); err != nil || count() != 2 {
		t.Fatalf("purged before its time (%v): %d namespaces", err, count())
	}
	r.Advance(25 * time.Hour)
	if err := job(context.Background()); err != nil || count() != 1 {
		t.Fatalf("kept past its time (%v): %d namespaces", err, count())
	}
}

// A job runs once a period, at once when kicked (a kick before Start at
// Start), and in the caller with Run; Stop ends the runs under way.
func TestSchedulerRunsKickedJobs(t *testing.T) {
	s := upkeep.NewScheduler(quiet)
	runs := make(chan struct{}, 10)
	s.Add(upkeep.Job{Name: "j", Every: time.Hour, Run: func(ctx context.Context) error {
		runs <- struct{}{}
		return nil
	}})
	blocked := make(chan struct{})
	s.Add(upkeep.Job{Name: "slow", Every: time.Hour, Run: func(ctx context.Context) error {
		close(blocked)
		<-ctx.Done()
		return ctx.Err()
	}})
	s.Kick("j")
	s.Kick("slow")
	s.Start()
	<-runs
	s.Kick("j")
	<-runs
	if err := s.Run(context.Background(), "j"); err != nil {
		t.Fatal(err)
	}
	<-runs
	<-blocked
	s.Stop() // returns only once slow's run saw its context end
	defer func() {
		if recover() == nil {
			t.Error("a job registered twice was taken")
		}
	}()
	s.Add(upkeep.Job{Name: "j", Every: time.Hour})
}
