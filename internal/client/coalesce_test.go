package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// fakeMeta answers GetFileStatus and Create alone or in batches: a path
// "/missing" is not found, and the create of "/moved" finds that the
// member lost the lead. A call made alone waits until hold is closed.
type fakeMeta struct {
	hold chan struct{}

	mu      sync.Mutex
	batches [][]*pb.BatchCall
	alone   []proto.Message // the requests made alone, in order
}

var errMissing = rpcerr.ToStatus(fserr.Errorf(fserr.ErrNotFound, "stat /missing: no such file or directory"))

func (f *fakeMeta) Invoke(_ context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	if method == pb.MetaService_Batch_FullMethodName {
		req := args.(*pb.BatchRequest)
		f.mu.Lock()
		f.batches = append(f.batches, req.Calls)
		f.mu.Unlock()
		resp := reply.(*pb.BatchResponse)
		for _, c := range req.Calls {
			resp.Results = append(resp.Results, f.answer(c))
		}
		return nil
	}
	f.mu.Lock()
	f.alone = append(f.alone, proto.Clone(args.(proto.Message)))
	f.mu.Unlock()
	<-f.hold
	switch r := args.(type) {
	case *pb.GetFileStatusRequest:
		if r.Path == "/missing" {
			return errMissing
		}
		reply.(*pb.GetFileStatusResponse).Status = &pb.FileStatus{Name: r.Path}
	case *pb.CreateRequest:
		reply.(*pb.CreateResponse).Status = &pb.FileStatus{Name: r.Path}
	}
	return nil
}

func (f *fakeMeta) answer(c *pb.BatchCall) *pb.BatchResult {
	fail := func(err error) *pb.BatchResult {
		b, _ := proto.Marshal(status.Convert(err).Proto())
		return &pb.BatchResult{Error: b}
	}
	switch {
	case c.GetGetFileStatus().GetPath() == "/missing":
		return fail(errMissing)
	case c.GetGetFileStatus() != nil:
		return &pb.BatchResult{Result: &pb.BatchResult_GetFileStatus{GetFileStatus: &pb.GetFileStatusResponse{
			Status: &pb.FileStatus{Name: c.GetGetFileStatus().Path}}}}
	case c.GetCreate().GetPath() == "/moved":
		return fail(rpcerr.ToStatus(fserr.NotLeader("")))
	case c.GetCreate() != nil:
		return &pb.BatchResult{Result: &pb.BatchResult_Create{Create: &pb.CreateResponse{
			Status: &pb.FileStatus{Name: c.GetCreate().Path}}}}
	}
	return fail(status.Error(codes.Unimplemented, "fake"))
}

func (f *fakeMeta) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("fake: no streams")
}

// queued waits until c has n calls waiting, and one in flight.
func queued(t *testing.T, c *coalescer, n int) { t.Helper(); settled(t, c, n, 1) }

// settled waits until c has n calls waiting and inFlight in flight.
func settled(t *testing.T, c *coalescer, n, inFlight int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		got, in := len(c.mu.pending), c.mu.inFlight
		c.mu.Unlock()
		if got == n && in == inFlight {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued and %d in flight, want %d and %d", got, in, n, inFlight)
		}
		runtime.Gosched()
	}
}

// startFirst makes a stat that holds c's one place in flight until fake's
// hold is closed, and returns its error's channel.
func startFirst(t *testing.T, c *coalescer, meta pb.MetaServiceClient) chan error {
	first := make(chan error, 1)
	go func() {
		_, err := stat(context.Background(), meta, "/first")
		first <- err
	}()
	queued(t, c, 0)
	return first
}

func stat(ctx context.Context, meta pb.MetaServiceClient, path string) (string, error) {
	r, err := meta.GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: &pb.Header{User: "u"}, Path: path})
	return r.GetStatus().GetName(), err
}

func TestCoalescerBatchesTheCallsMadeWhileOthersAreInFlight(t *testing.T) {
	ctx := context.Background()
	fake := &fakeMeta{hold: make(chan struct{})}
	c := newCoalescer(fake, 1)
	meta := pb.NewMetaServiceClient(coalescing{c, c})

	first := startFirst(t, c, meta)
	paths := []string{"/a", "/missing", "/b", "/c"}
	type answer struct {
		name string
		err  error
	}
	answers := make([]chan answer, len(paths))
	for i, p := range paths {
		answers[i] = make(chan answer, 1)
		go func() {
			name, err := stat(ctx, meta, p)
			answers[i] <- answer{name, err}
		}()
	}
	queued(t, c, len(paths))
	close(fake.hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		a := <-answers[i]
		switch {
		case p == "/missing" && !errors.Is(rpcerr.FromStatus(a.err), fserr.ErrNotFound):
			t.Errorf("stat %s: %v, want not found", p, a.err)
		case p != "/missing" && (a.err != nil || a.name != p):
			t.Errorf("stat %s: %q, %v", p, a.name, a.err)
		}
	}
	if len(fake.alone) != 1 || len(fake.batches) != 1 || len(fake.batches[0]) != len(paths) {
		t.Fatalf("%d calls alone and batches %v; want the first alone and the rest in one batch", len(fake.alone), fake.batches)
	}
	settled(t, c, 0, 0) // the batch's place in flight is free once its sender returns
	if _, err := stat(ctx, meta, "/after"); err != nil {
		t.Fatal(err)
	}
	if len(fake.alone) != 2 {
		t.Fatalf("a call with nothing in flight was not made alone")
	}
}

func TestCoalescerMutationsCarryRequestIDsAndRetryAlone(t *testing.T) {
	ctx := context.Background()
	fake := &fakeMeta{hold: make(chan struct{})}
	c := newCoalescer(fake, 1)
	meta := pb.NewMetaServiceClient(coalescing{c, c})

	first := startFirst(t, c, meta)
	errs := make(chan error, 2)
	for _, p := range []string{"/new", "/moved"} {
		go func() {
			r, err := meta.Create(ctx, &pb.CreateRequest{Header: &pb.Header{User: "u"}, Path: p})
			if err == nil && r.GetStatus().GetName() != p {
				err = fmt.Errorf("create %s answered for %q", p, r.GetStatus().GetName())
			}
			errs <- err
		}()
	}
	queued(t, c, 2)
	close(fake.hold)
	for range 3 {
		select {
		case err := <-first:
			if err != nil {
				t.Fatal(err)
			}
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(fake.batches) != 1 || len(fake.alone) != 2 {
		t.Fatalf("%d batches and %d calls alone; want one batch and the NOT_LEADER create retried alone", len(fake.batches), len(fake.alone))
	}
	var batched *pb.Header
	for _, call := range fake.batches[0] {
		h := call.GetCreate().GetHeader()
		if len(h.GetRequestId()) == 0 || !h.GetFirstAttempt() {
			t.Fatalf("a batched create's header %v: want a request id, first attempt", h)
		}
		if call.GetCreate().GetPath() == "/moved" {
			batched = h
		}
	}
	retried := fake.alone[1].(*pb.CreateRequest)
	if retried.Path != "/moved" || !bytes.Equal(retried.Header.RequestId, batched.RequestId) {
		t.Fatalf("the create retried alone is %v; want /moved with the batch's request id %x", retried, batched.RequestId)
	}
}

func TestCoalescerDropsTheCallsOfCallersThatGaveUp(t *testing.T) {
	ctx := context.Background()
	fake := &fakeMeta{hold: make(chan struct{})}
	c := newCoalescer(fake, 1)
	meta := pb.NewMetaServiceClient(coalescing{c, c})

	first := startFirst(t, c, meta)
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() {
		_, err := stat(cctx, meta, "/given-up")
		gaveUp <- err
	}()
	queued(t, c, 1)
	cancel()
	if err := <-gaveUp; status.Code(err) != codes.Canceled {
		t.Fatalf("a cancelled call returned %v", err)
	}
	kept := make(chan error)
	go func() {
		_, err := stat(ctx, meta, "/kept")
		kept <- err
	}()
	queued(t, c, 2)
	close(fake.hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-kept; err != nil {
		t.Fatal(err)
	}
	if len(fake.batches) != 1 || len(fake.batches[0]) != 1 || fake.batches[0][0].GetGetFileStatus().Path != "/kept" {
		t.Fatalf("batches %v: want one of /kept alone", fake.batches)
	}
}

func TestSentBeforeClearsFirstAttempt(t *testing.T) {
	req := &pb.BatchRequest{Calls: []*pb.BatchCall{
		{Call: &pb.BatchCall_Create{Create: &pb.CreateRequest{Header: &pb.Header{RequestId: []byte{1}, FirstAttempt: true}}}},
		{Call: &pb.BatchCall_Delete{Delete: &pb.DeleteRequest{Header: &pb.Header{RequestId: []byte{2}, FirstAttempt: true}}}},
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: &pb.GetFileStatusRequest{}}},
	}}
	sentBefore(req)
	for _, call := range req.Calls {
		if headerOf(call).GetFirstAttempt() {
			t.Fatalf("%v still says first attempt", call)
		}
	}
}
