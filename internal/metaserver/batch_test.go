package metaserver_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// batchError returns the error of a batch's result, as the client sees it.
func batchError(t *testing.T, r *pb.BatchResult) error {
	t.Helper()
	if len(r.Error) == 0 {
		return nil
	}
	st := &rpcstatus.Status{}
	if err := proto.Unmarshal(r.Error, st); err != nil {
		t.Fatal(err)
	}
	return rpcerr.FromStatus(status.ErrorProto(st))
}

func TestBatchAnswersEveryCallAsIfItCameAlone(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	ctx := svc.Context(t, "")
	c := testcluster.Client(t, svc.Addr, "")
	// NB: no mutation of the batch touches what its reads read: the reads
	// run while the mutations' entry is written and applied, and may see
	// it applied or not.
	for _, p := range []string{"/d/old", "/d/moved", "/d/gone"} {
		if err := c.WriteFile(ctx, p, []byte(p), client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "batch-test"}
	resp, err := svc.Server.Batch(ctx, &pb.BatchRequest{Calls: []*pb.BatchCall{
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: &pb.GetFileStatusRequest{Header: h, Path: "/d/old"}}},
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: &pb.GetFileStatusRequest{Header: h, Path: "/missing"}}},
		{Call: &pb.BatchCall_Open{Open: &pb.OpenRequest{Header: h, Path: "/d"}}},
		{Call: &pb.BatchCall_Mkdirs{Mkdirs: &pb.MkdirsRequest{Header: h, Path: "/e/f", Permission: 0o755, CreateParents: true}}},
		{Call: &pb.BatchCall_Create{Create: &pb.CreateRequest{Header: h, Path: "/d/new", Permission: 0o644, Complete: true, InlineData: []byte("x")}}},
		{Call: &pb.BatchCall_Rename{Rename: &pb.RenameRequest{Header: h, Src: "/d/moved", Dst: "/d/renamed"}}},
		{Call: &pb.BatchCall_Delete{Delete: &pb.DeleteRequest{Header: h, Path: "/d/gone"}}},
		{Call: &pb.BatchCall_Delete{Delete: &pb.DeleteRequest{Path: "/d/new"}}}, // no header
		{},
		{Call: &pb.BatchCall_Create{Create: &pb.CreateRequest{Header: &pb.Header{User: testcluster.Superuser()}, Path: "/d/anonymous",
			Permission: 0o644, Complete: true}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results
	if len(r) != 10 {
		t.Fatalf("%d results for 10 calls", len(r))
	}
	for i, want := range []error{nil, fserr.ErrNotFound, fserr.ErrIsDir, nil, nil, nil, nil, fserr.ErrInvalidArgument, fserr.ErrInvalidArgument,
		fserr.ErrInvalidArgument} {
		if err := batchError(t, r[i]); want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("call %d: %v, want %v", i, err, want)
		}
	}
	if r[0].GetGetFileStatus().GetStatus().GetLength() != uint64(len("/d/old")) || !r[3].GetMkdirs().GetCreated() ||
		r[4].GetCreate().GetStatus().GetLength() != 1 || r[5].GetRename().GetFinalPath() != "/d/renamed" || !r[6].GetDelete().GetDeleted() {
		t.Fatalf("results %v", r)
	}
	for p, exists := range map[string]bool{"/e/f": true, "/d/new": true, "/d/renamed": true, "/d/moved": false, "/d/old": true, "/d/gone": false,
		"/d/anonymous": false} {
		if _, err := c.Stat(ctx, p); exists != (err == nil) {
			t.Errorf("stat %s after the batch: %v", p, err)
		}
	}
}

func TestBatchOfTooManyCallsIsRefusedWhole(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	ctx := svc.Context(t, "")
	calls := make([]*pb.BatchCall, metaserver.MaxBatch+1)
	for i := range calls {
		calls[i] = &pb.BatchCall{Call: &pb.BatchCall_Mkdirs{Mkdirs: &pb.MkdirsRequest{
			Header: &pb.Header{User: testcluster.Superuser()}, Path: "/never", CreateParents: true}}}
	}
	if _, err := svc.Server.Batch(ctx, &pb.BatchRequest{Calls: calls}); status.Code(rpcerr.ToStatus(err)) != codes.InvalidArgument {
		t.Fatalf("a batch of %d calls: %v", len(calls), err)
	}
	c := testcluster.Client(t, svc.Addr, "")
	if _, err := c.Stat(ctx, "/never"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("a refused batch made a call: %v", err)
	}
}

// TestBatchInAGroup sends batches to the members of a group: a follower
// refuses a whole batch with NOT_LEADER; the leader answers the reads of a
// batch after one read barrier, and an isolated leader answers none.
func TestBatchInAGroup(t *testing.T) {
	members, cut := cuttableGroup(t, 3)
	leader := leaderOf(t, members, -1)
	c := clientOf(t, time.Minute, members...)
	ctx := members[0].Context(t, "")
	if err := c.WriteFile(ctx, "/f", []byte("x"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "batch-test"}
	stats := &pb.BatchRequest{}
	for _, p := range []string{"/f", "/missing", "/"} {
		stats.Calls = append(stats.Calls, &pb.BatchCall{Call: &pb.BatchCall_GetFileStatus{
			GetFileStatus: &pb.GetFileStatusRequest{Header: h, Path: p}}})
	}
	follower := members[(leader+1)%3].Server
	if _, err := follower.Batch(ctx, stats); !errors.Is(rpcerr.FromStatus(err), fserr.ErrNotLeader) {
		t.Fatalf("a follower's batch: %v, want NOT_LEADER", err)
	}
	resp, err := members[leader].Server.Batch(ctx, stats)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []error{nil, fserr.ErrNotFound, nil} {
		if err := batchError(t, resp.Results[i]); want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("stat %d on the leader: %v, want %v", i, err, want)
		}
	}

	id := uint64(leader + 1)
	cut(func(from, to uint64) bool { return from == id || to == id })
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err = members[leader].Server.Batch(bctx, stats)
	if err == nil {
		for i, r := range resp.Results {
			if len(r.Error) == 0 {
				t.Errorf("the isolated leader answered stat %d: %v", i, r)
			}
		}
	}
}

// TestConcurrentMutationsShareEntries makes hundreds of mutations in one
// batch: they take one log entry (two, should a command of the service's
// own background work land between), and each has its own answer,
// failures among them changing nothing.
func TestConcurrentMutationsShareEntries(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	ctx := svc.Context(t, "")
	c := testcluster.Client(t, svc.Addr, "")
	if err := c.WriteFile(ctx, "/g/taken", nil, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "group-test"}
	req := &pb.BatchRequest{}
	for i := range 300 {
		p := fmt.Sprintf("/g/f%03d", i)
		if i%10 == 0 {
			p = "/g/taken" // exists: an exclusive create fails
		}
		req.Calls = append(req.Calls, &pb.BatchCall{Call: &pb.BatchCall_Create{Create: &pb.CreateRequest{
			Header: h, Path: p, Permission: 0o644, Complete: true, InlineData: []byte(p)}}})
	}
	before := appliedIndex(t, svc.Server)
	resp, err := svc.Server.Batch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		p := req.Calls[i].GetCreate().Path
		err := batchError(t, r)
		if i%10 == 0 {
			if !errors.Is(err, fserr.ErrExists) {
				t.Errorf("create %d of an existing file: %v, want EXISTS", i, err)
			}
			continue
		}
		if st := r.GetCreate().GetStatus(); err != nil || "/g/"+st.GetName() != p || st.GetLength() != uint64(len(p)) {
			t.Errorf("create %d (%s): %v, %v", i, p, st, err)
		}
	}
	if entries := appliedIndex(t, svc.Server) - before; entries > 2 {
		t.Errorf("%d mutations at once took %d log entries", len(req.Calls), entries)
	}
	listed := 0
	if err := c.List(ctx, "/g", func(*client.FileStatus) error { listed++; return nil }); err != nil {
		t.Fatal(err)
	}
	if listed != 271 { // 270 new files, and the one that was there
		t.Fatalf("%d entries in /g after the batch, want 271", listed)
	}
	if data, err := c.ReadFile(ctx, "/g/taken"); err != nil || len(data) != 0 {
		t.Fatalf("the existing file after failed creates: %q, %v", data, err)
	}
}

func appliedIndex(t *testing.T, s *metaserver.Server) uint64 {
	t.Helper()
	st, err := s.Status(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return st.AppliedIndex
}

// TestMutationsDuringALogWriteShareAnEntry: mutations made, each alone in
// its call, while the Raft loop writes the log wait for the write to end
// (the loop would take none of them before), then go together in one
// entry, each with its own answer.
func TestMutationsDuringALogWriteShareAnEntry(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	ctx := svc.Context(t, "")
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "gather-test"}
	if _, err := svc.Server.Mkdirs(ctx, &pb.MkdirsRequest{Header: h, Path: "/w", Permission: 0o755}); err != nil {
		t.Fatal(err)
	}
	end := svc.Member.HoldLogWrite()
	before := appliedIndex(t, svc.Server)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			req := &pb.MkdirsRequest{Header: proto.CloneOf(h), Path: fmt.Sprintf("/w/d%d", i), Permission: 0o755}
			_, err := svc.Server.Mkdirs(ctx, req) // the service fills in the header: one each
			errs <- err
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); svc.Member.QueuedCommands() < n; runtime.Gosched() {
		if time.Now().After(deadline) { // a bound for a broken test
			t.Fatalf("%d of %d mutations wait for the log write to end", svc.Member.QueuedCommands(), n)
		}
	}
	if got := appliedIndex(t, svc.Server); got != before {
		t.Fatalf("the applied index moved from %d to %d during the log write", before, got)
	}
	end()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// One entry; two should a command of the service's own work land
	// between.
	if entries := appliedIndex(t, svc.Server) - before; entries > 2 {
		t.Errorf("%d mutations made during a log write took %d log entries", n, entries)
	}
	for i := range n {
		if _, err := svc.Server.GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: proto.CloneOf(h), Path: fmt.Sprintf("/w/d%d", i)}); err != nil {
			t.Errorf("d%d: %v", i, err)
		}
	}
}
