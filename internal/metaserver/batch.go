package metaserver

import (
	"context"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// MaxBatch is the most calls one Batch may hold.
const MaxBatch = 1024

// Batch implements MetaService: every call is made as if it came alone.
// The commands of the mutations join the log together, in one entry; the
// reads run meanwhile, then the mutations are answered in turn as their
// results come. The handler makes them all itself: with a goroutine per
// mutation, each apply woke one per command, and they queued for the cores
// ahead of the service's own work (docs/benchmarks.md, "The settings"). Which
// calls a batch may carry, and which are reads, is the state machine's
// table.
func (s *Server) Batch(ctx context.Context, r *pb.BatchRequest) (*pb.BatchResponse, error) {
	if len(r.Calls) > MaxBatch {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "a batch of %d calls: at most %d", len(r.Calls), MaxBatch)
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	results := make([]*pb.BatchResult, len(r.Calls))
	calls := make([]batched, len(r.Calls))
	for i, c := range r.Calls {
		b := &calls[i]
		if b.op, b.req = ofCall(c); b.op == nil {
			results[i] = failed(fserr.Errorf(fserr.ErrInvalidArgument, "batch: a call of no kind this service knows"))
			continue
		}
		if err := s.admit(ctx, b.op, b.req); err != nil {
			results[i] = failed(err)
		}
	}
	s.prepareBatch(ctx, calls, results)
	var q []*proposal
	reads := 0
	for i := range calls {
		b := &calls[i]
		if results[i] != nil {
			continue
		}
		if b.op.Kind == statemachine.Read {
			reads++
			continue
		}
		b.p = newProposal(b.op.Command(b.req))
		q = append(q, b.p)
	}
	if len(q) > 0 {
		s.submit(q...)
	}
	if reads > 0 {
		s.readAll(ctx, r.Calls, calls, results)
	}
	for i, b := range calls {
		if b.p != nil {
			res, err := s.wait(ctx, b.p)
			resp, err := s.answer(ctx, b.op, b.req, res, err)
			results[i] = answered(r.Calls[i], resp, err)
		}
		if b.release != nil {
			releaseWhenSettled(b.p, s.node.Done(), b.release)
		}
	}
	return &pb.BatchResponse{Results: results}, nil
}

// batched is a call of a batch: its operation and request, and its
// proposal if it is a mutation that was proposed.
type batched struct {
	op      *statemachine.Op
	req     request
	p       *proposal
	release func() // a cache-mode call's, once answered and applied (prepareBatch)
}

func ofCall(c *pb.BatchCall) (*statemachine.Op, request) {
	op, req := statemachine.OfCall(c)
	if op == nil {
		return nil, nil
	}
	return op, req.(request)
}

// readAll makes the reads of a batch. One read barrier serves them all: it
// is passed after all of them were made.
func (s *Server) readAll(ctx context.Context, in []*pb.BatchCall, calls []batched, results []*pb.BatchResult) {
	err := s.node.ReadBarrier(ctx)
	rctx := context.WithValue(ctx, barrierKey{}, true)
	for i, b := range calls {
		switch {
		case results[i] != nil || b.op == nil || b.op.Kind != statemachine.Read:
		case err != nil:
			results[i] = failed(s.raftError(err))
		default:
			resp, err := s.read(rctx, b.op, b.req)
			results[i] = answered(in[i], resp, err)
		}
	}
}

// answered is the result of call c: its answer r, in the result's field of
// the call's name, or its error.
func answered(c *pb.BatchCall, r proto.Message, err error) *pb.BatchResult {
	if err != nil {
		return failed(err)
	}
	res := &pb.BatchResult{}
	m, name := res.ProtoReflect(), c.ProtoReflect().WhichOneof(callOneof).Name()
	m.Set(m.Descriptor().Fields().ByName(name), protoreflect.ValueOfMessage(r.ProtoReflect()))
	return res
}

// failed is the result of a call that failed: its error translated as the
// interceptor translates a call's alone.
func failed(err error) *pb.BatchResult {
	b, _ := proto.Marshal(status.Convert(rpcerr.ToStatus(err)).Proto())
	return &pb.BatchResult{Error: b}
}

// barrierKey marks a context whose reads passed a read barrier already.
type barrierKey struct{}

func passedBarrier(ctx context.Context) bool { return ctx.Value(barrierKey{}) != nil }

var callOneof = (&pb.BatchCall{}).ProtoReflect().Descriptor().Oneofs().ByName("call")
