package metaserver

import (
	"context"
	"sync"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// MaxBatch is the most calls one Batch may hold.
const MaxBatch = 1024

// Batch implements MetaService: every call is made as if it came alone.
// The mutations run concurrently, and their commands join the log
// together, in one entry; the reads run in turn meanwhile.
func (s *Server) Batch(ctx context.Context, r *pb.BatchRequest) (*pb.BatchResponse, error) {
	if len(r.Calls) > MaxBatch {
		return nil, fserr.ToStatus(fserr.Errorf(fserr.ErrInvalidArgument, "a batch of %d calls: at most %d", len(r.Calls), MaxBatch))
	}
	if !s.isLeader() {
		return nil, fserr.ToStatus(s.notLeader())
	}
	results := make([]*pb.BatchResult, len(r.Calls))
	var wg sync.WaitGroup
	reads := 0
	for _, c := range r.Calls {
		if isRead(c) {
			reads++
		}
	}
	g := s.gathering(len(r.Calls) - reads)
	for i, c := range r.Calls {
		if !isRead(c) {
			mctx, sl := g.slot(ctx)
			wg.Go(func() {
				results[i] = s.call(mctx, c)
				sl.finished()
			})
		}
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
				results[i] = s.call(rctx, c)
			}
		}
	}
	wg.Wait()
	return &pb.BatchResponse{Results: results}, nil
}

func isRead(c *pb.BatchCall) bool { return c.GetGetFileStatus() != nil || c.GetOpen() != nil }

// call makes one call of a batch through the method that serves it alone;
// its answer goes in the result's field of the call's name.
func (s *Server) call(ctx context.Context, c *pb.BatchCall) *pb.BatchResult {
	var r proto.Message
	var err error
	switch c := c.Call.(type) {
	case *pb.BatchCall_GetFileStatus:
		r, err = s.GetFileStatus(ctx, c.GetFileStatus)
	case *pb.BatchCall_Open:
		r, err = s.Open(ctx, c.Open)
	case *pb.BatchCall_Mkdirs:
		r, err = s.Mkdirs(ctx, c.Mkdirs)
	case *pb.BatchCall_Create:
		r, err = s.Create(ctx, c.Create)
	case *pb.BatchCall_Complete:
		r, err = s.Complete(ctx, c.Complete)
	case *pb.BatchCall_Rename:
		r, err = s.Rename(ctx, c.Rename)
	case *pb.BatchCall_Delete:
		r, err = s.Delete(ctx, c.Delete)
	default:
		err = fserr.Errorf(fserr.ErrInvalidArgument, "batch: a call of no kind this service knows")
	}
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
