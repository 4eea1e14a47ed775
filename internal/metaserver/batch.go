package metaserver

import (
	"context"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// MaxBatch is the most calls one Batch may hold.
const MaxBatch = 1024

// Batch implements MetaService: every call is made as if it came alone.
// The commands of the mutations join the log together, in one entry; the
// reads run meanwhile, then the mutations are answered in turn as their
// results come. The handler makes them all itself: with a goroutine per
// mutation, each apply woke one per command, and they queued for the cores
// ahead of the service's own work (docs/benchmarks.md, session 7).
func (s *Server) Batch(ctx context.Context, r *pb.BatchRequest) (*pb.BatchResponse, error) {
	if len(r.Calls) > MaxBatch {
		return nil, fserr.ToStatus(fserr.Errorf(fserr.ErrInvalidArgument, "a batch of %d calls: at most %d", len(r.Calls), MaxBatch))
	}
	if !s.isLeader() {
		return nil, fserr.ToStatus(s.notLeader())
	}
	results := make([]*pb.BatchResult, len(r.Calls))
	type proposed struct {
		call int
		m    mutation
		p    *proposal
	}
	var mutations []proposed
	var q []*proposal
	reads := 0
	for i, c := range r.Calls {
		if isRead(c) {
			reads++
			continue
		}
		m := s.batchMutation(c)
		if m.err == nil {
			m.err = checkHeader(m.header)
		}
		if m.err != nil {
			results[i] = failed(m.err)
			continue
		}
		p := newProposal(m.cmd)
		mutations = append(mutations, proposed{i, m, p})
		q = append(q, p)
	}
	if len(q) > 0 {
		s.submit(q...)
	}
	// One read barrier serves every read of the batch: it is passed after
	// all of them were made.
	if reads > 0 {
		err := s.node.ReadBarrier(ctx)
		rctx := context.WithValue(ctx, barrierKey{}, true)
		for i, c := range r.Calls {
			switch {
			case !isRead(c):
			case err != nil:
				results[i] = failed(s.raftError(err))
			default:
				results[i] = s.read(rctx, c)
			}
		}
	}
	for _, pm := range mutations {
		v, err := s.wait(ctx, pm.p)
		a, err := pm.m.answer(ctx, v, s.raftError(err))
		results[pm.call] = answered(r.Calls[pm.call], a, err)
	}
	return &pb.BatchResponse{Results: results}, nil
}

func isRead(c *pb.BatchCall) bool { return c.GetGetFileStatus() != nil || c.GetOpen() != nil }

// batchMutation returns the mutation a batch's call makes.
func (s *Server) batchMutation(c *pb.BatchCall) mutation {
	switch c := c.Call.(type) {
	case *pb.BatchCall_Mkdirs:
		return mkdirs(c.Mkdirs)
	case *pb.BatchCall_Create:
		return s.create(c.Create)
	case *pb.BatchCall_Complete:
		return complete(c.Complete)
	case *pb.BatchCall_Rename:
		return rename(c.Rename)
	case *pb.BatchCall_Delete:
		return deletion(c.Delete)
	}
	return mutation{err: fserr.Errorf(fserr.ErrInvalidArgument, "batch: a call of no kind this service knows")}
}

// read makes a read of a batch through the method that serves it alone.
func (s *Server) read(ctx context.Context, c *pb.BatchCall) *pb.BatchResult {
	var r proto.Message
	var err error
	switch c := c.Call.(type) {
	case *pb.BatchCall_GetFileStatus:
		r, err = s.GetFileStatus(ctx, c.GetFileStatus)
	case *pb.BatchCall_Open:
		r, err = s.Open(ctx, c.Open)
	}
	return answered(c, r, err)
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

func failed(err error) *pb.BatchResult {
	b, _ := proto.Marshal(status.Convert(fserr.ToStatus(err)).Proto())
	return &pb.BatchResult{Error: b}
}

// barrierKey marks a context whose reads passed a read barrier already.
type barrierKey struct{}

func passedBarrier(ctx context.Context) bool { return ctx.Value(barrierKey{}) != nil }

var callOneof = (&pb.BatchCall{}).ProtoReflect().Descriptor().Oneofs().ByName("call")
