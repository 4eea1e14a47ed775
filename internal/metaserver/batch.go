package metaserver

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// MaxBatch is the most calls one Batch may hold.
const MaxBatch = 1024

// batch carries out a Batch: every call is made as if it came alone. The
// commands of the mutations join the log together, in one entry; the
// reads run meanwhile, then the mutations are answered in turn as their
// results come. The handler makes them all itself: with a goroutine per
// mutation, each apply woke one per command, and they queued for the cores
// ahead of the service's own work (docs/benchmarks.md, "The settings").
// Which calls a batch may carry, and which are reads, is the state
// machine's table.
func (m *Member) batch(ctx context.Context, r *pb.BatchRequest) (*pb.BatchResponse, error) {
	if len(r.Calls) > MaxBatch {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "a batch of %d calls: at most %d", len(r.Calls), MaxBatch)
	}
	if !m.core.IsLeader() {
		return nil, m.core.NotLeader()
	}
	results := make([]*pb.BatchResult, len(r.Calls))
	calls := make([]batched, len(r.Calls))
	defer m.observeBatch(calls, results, time.Now())
	for i, c := range r.Calls {
		b := &calls[i]
		op, req := sm.OfCall(c)
		if op == nil {
			results[i] = failed(fserr.Errorf(fserr.ErrInvalidArgument, "batch: a call of no kind this service knows"))
			continue
		}
		b.op, b.req, b.steps = op, req.(sm.Request), table[op]
		if err := m.admit(ctx, b.steps, b.req); err != nil {
			results[i] = failed(err)
		}
	}
	m.prepareBatch(ctx, calls, results)
	var q []*proposal
	reads := 0
	for i := range calls {
		b := &calls[i]
		if results[i] != nil {
			continue
		}
		if b.op.Kind == sm.Read {
			reads++
			continue
		}
		b.p = newProposal(b.op.Command(b.req))
		q = append(q, b.p)
	}
	if len(q) > 0 {
		m.core.submit(q...)
	}
	if reads > 0 {
		m.readAll(ctx, r.Calls, calls, results)
	}
	for i, b := range calls {
		if b.p != nil {
			resp, err := m.responded(ctx, b.op, b.p)
			resp, err = m.answer(ctx, b.steps, b.req, resp, err)
			results[i] = answered(r.Calls[i], resp, err)
		}
		if b.release != nil {
			releaseWhenSettled(b.p, m.core.Done(), b.release)
		}
	}
	return &pb.BatchResponse{Results: results}, nil
}

// observeBatch tells the observer of the calls of a batch that started at
// start: each as a call of its own that took the batch's time.
func (m *Member) observeBatch(calls []batched, results []*pb.BatchResult, start time.Time) {
	d := time.Since(start)
	for i, b := range calls {
		if b.op == nil {
			continue
		}
		var err error
		if res := results[i]; res != nil && len(res.Error) > 0 {
			err = rpcerr.Unmarshal(res.Error)
		}
		m.cfg.Observe.Op(b.op.Name, d, err)
	}
}

// batched is a call of a batch: its operation, request and steps, and its
// proposal if it is a mutation that was proposed.
type batched struct {
	op      *sm.Op
	req     sm.Request
	steps   steps
	p       *proposal
	release func() // a cache-mode call's, once answered and applied (prepareBatch)
}

// readAll makes the reads of a batch. One read barrier serves them all: it
// is passed after all of them were made.
func (m *Member) readAll(ctx context.Context, in []*pb.BatchCall, calls []batched, results []*pb.BatchResult) {
	rctx, err := m.core.barrier(ctx)
	for i, b := range calls {
		switch {
		case results[i] != nil || b.op == nil || b.op.Kind != sm.Read:
		case err != nil:
			results[i] = failed(err)
		default:
			resp, err := m.read(rctx, b.op, b.req)
			resp, err = m.answer(rctx, b.steps, b.req, resp, err)
			results[i] = answered(in[i], resp, err)
		}
	}
}

// prepareBatchConcurrency bounds the calls of one batch whose bucket
// sides are done at once.
const prepareBatchConcurrency = 32

// prepareBatch prepares the calls of a batch that have no result yet,
// those of cache-mode namespaces together: each may wait on the bucket.
// Each prepared call's release is to be called once it is answered and
// its proposal, if any, settled (releaseWhenSettled).
func (m *Member) prepareBatch(ctx context.Context, calls []batched, results []*pb.BatchResult) {
	sem := make(chan struct{}, prepareBatchConcurrency)
	var wg sync.WaitGroup
	for i := range calls {
		b := &calls[i]
		if results[i] != nil || m.cache.lookup(b.req.GetHeader().GetNamespace()) == nil {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			req, _, release, err := m.prepare(ctx, b.op, b.steps, b.req)
			if err != nil {
				results[i] = failed(err)
				return
			}
			b.req, b.release = req, release
		}()
	}
	wg.Wait()
}

// answered is the result of call c: its answer r, in the result's field of
// the call's name, or its error.
func answered(c *pb.BatchCall, r proto.Message, err error) *pb.BatchResult {
	if err != nil {
		return failed(err)
	}
	res := &pb.BatchResult{}
	msg := res.ProtoReflect()
	msg.Set(msg.Descriptor().Fields().ByName(sm.CallName(c)), protoreflect.ValueOfMessage(r.ProtoReflect()))
	return res
}

// failed is the result of a call that failed: its error translated as the
// interceptor translates a call's alone.
func failed(err error) *pb.BatchResult {
	b, _ := proto.Marshal(status.Convert(rpcerr.ToStatus(err)).Proto())
	return &pb.BatchResult{Error: b}
}
