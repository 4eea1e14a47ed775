package client

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// DefaultBatchesInFlight is how many reads, or batches of coalesced reads,
// a client keeps in flight at most (Config.BatchesInFlight); mutations
// likewise.
const DefaultBatchesInFlight = 4

// coalescing sends each call through the coalescer of its kind: a batch of
// reads never waits for a mutation's fsync, nor a mutation for reads.
type coalescing struct{ reads, mutations *coalescer }

func newCoalescing(m grpc.ClientConnInterface, max int) coalescing {
	return coalescing{newCoalescer(m, max), newCoalescer(m, max)}
}

// Invoke implements grpc.ClientConnInterface.
func (c coalescing) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	withTraceID(ctx, args)
	if mutations[method] {
		return c.mutations.Invoke(ctx, method, args, reply, opts...)
	}
	return c.reads.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface.
func (c coalescing) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.reads.m.NewStream(ctx, desc, method, opts...)
}

// sent counts the Batch RPCs made.
func (c coalescing) sent() int64 { return c.reads.sent.Load() + c.mutations.sent.Load() }

// maxBatchCalls is the most calls one batch carries.
const maxBatchCalls = 256

// coalescer sends the calls of concurrent threads in batches. A call made while
// fewer than max calls or batches are in flight goes at once, alone, as
// its own RPC; calls made while max are in flight wait, and leave together
// in one Batch RPC as soon as one returns. A lone caller thus waits for
// nothing, and under load one round trip carries many calls, so that the
// service spends its CPU on the calls rather than on the RPCs.
type coalescer struct {
	m   grpc.ClientConnInterface // the members
	max int
	// sent counts the Batch RPCs made.
	sent atomic.Int64
	mu   struct {
		sync.Mutex
		pending  []*batched
		inFlight int
	}
}

// batched is a call waiting in or for a batch. Its fields are the
// caller's until it is queued, then the batch's until done is closed.
type batched struct {
	args   proto.Message
	reply  proto.Message
	fields batchFields
	err    error
	alone  bool // the batch could not make it (NOT_LEADER): make it alone
	done   chan struct{}

	// under the coalescer's mutex:
	abandoned bool
	batch     *sentBatch
}

// sentBatch is a batch in flight, cancelled once all its callers gave up.
type sentBatch struct {
	waiting int
	cancel  context.CancelFunc
}

func newCoalescer(m grpc.ClientConnInterface, max int) *coalescer { return &coalescer{m: m, max: max} }

// Invoke makes a call, alone or in a batch.
func (c *coalescer) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	fields, ok := batchable[method]
	if !ok || c.max <= 0 {
		return c.m.Invoke(ctx, method, args, reply, opts...)
	}
	c.mu.Lock()
	if c.mu.inFlight < c.max && len(c.mu.pending) == 0 {
		c.mu.inFlight++
		c.mu.Unlock()
		err := c.m.Invoke(ctx, method, args, reply, opts...)
		c.release()
		return err
	}
	b := &batched{args: args.(proto.Message), reply: reply.(proto.Message), fields: fields, done: make(chan struct{})}
	if mutations[method] {
		if h, fresh := withRequestID(args); h != nil {
			h.FirstAttempt = fresh
		}
	}
	c.mu.pending = append(c.mu.pending, b)
	c.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		c.abandon(b)
		return grpcstatus.FromContextError(ctx.Err()).Err() // what gRPC returns
	}
	if b.alone {
		return c.m.Invoke(ctx, method, args, reply, opts...)
	}
	return b.err
}

// release hands a finished RPC's place in flight to the calls that queued
// meanwhile, or frees it.
func (c *coalescer) release() {
	if batch := c.next(); batch != nil {
		go c.run(batch)
	}
}

// run sends batch, then what queued meanwhile, until nothing waits.
//
// NB: once a batch is answered, run yields the processor before it takes
// the next one. The callers just answered mostly make their next call at
// once; yielding lets them queue it, so that it leaves now, in the next
// batch, rather than one round trip later in the one after. At 64
// threads this halved the batches sent and made creates 15-30% faster
// (docs/benchmarks.md, "The settings").
func (c *coalescer) run(batch []*batched) {
	for ; batch != nil; batch = c.next() {
		c.send(batch)
		runtime.Gosched()
	}
}

// next takes the next batch, or frees the place in flight when nothing
// waits.
func (c *coalescer) next() []*batched {
	c.mu.Lock()
	defer c.mu.Unlock()
	var batch []*batched
	for len(c.mu.pending) > 0 && len(batch) < maxBatchCalls {
		b := c.mu.pending[0]
		c.mu.pending[0] = nil
		c.mu.pending = c.mu.pending[1:]
		if !b.abandoned {
			batch = append(batch, b)
		}
	}
	if batch == nil {
		c.mu.inFlight--
	}
	return batch
}

// abandon drops b, whose caller gave up: a queued call never leaves, and
// a batch whose callers all gave up is cancelled.
func (c *coalescer) abandon(b *batched) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b.abandoned = true
	if sb := b.batch; sb != nil {
		if sb.waiting--; sb.waiting == 0 {
			sb.cancel()
		}
	}
}

// send makes batch as one Batch RPC and answers its callers.
func (c *coalescer) send(batch []*batched) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sb := &sentBatch{cancel: cancel}
	req := &pb.BatchRequest{}
	c.mu.Lock()
	batch = slices.DeleteFunc(batch, func(b *batched) bool { return b.abandoned }) // since next
	for _, b := range batch {
		b.batch = sb
		call := &pb.BatchCall{}
		call.ProtoReflect().Set(b.fields.call, protoreflect.ValueOfMessage(b.args.ProtoReflect()))
		req.Calls = append(req.Calls, call)
	}
	sb.waiting = len(batch)
	c.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	resp := &pb.BatchResponse{}
	c.sent.Add(1)
	err := c.m.Invoke(ctx, pb.MetaService_Batch_FullMethodName, req, resp)
	if err == nil && len(resp.Results) != len(batch) {
		err = grpcstatus.Errorf(codes.Internal, "a batch of %d calls got %d results", len(batch), len(resp.Results))
	}
	for i, b := range batch {
		if err != nil {
			b.err = err
		} else {
			b.answer(resp.Results[i])
		}
		close(b.done)
	}
}

// answer takes b's result from a batch.
func (b *batched) answer(r *pb.BatchResult) {
	if len(r.Error) > 0 {
		st := &status.Status{}
		if err := proto.Unmarshal(r.Error, st); err != nil {
			b.err = grpcstatus.Errorf(codes.Internal, "a batch result's error: %v", err)
			return
		}
		// A member that lost the lead midway: the call looks for the
		// leader on its own, as an RPC of its own does.
		b.alone = st.Code == int32(codes.Unavailable)
		b.err = grpcstatus.ErrorProto(st)
		return
	}
	rm := r.ProtoReflect()
	if !rm.Has(b.fields.result) {
		b.err = grpcstatus.Errorf(codes.Internal, "a batch result of another kind than its call")
		return
	}
	proto.Merge(b.reply, rm.Get(b.fields.result).Message().Interface())
}

// sentBefore marks the mutations of a batch that is sent again as sent
// before: the service must look up their request ids.
func sentBefore(args any) {
	if req, ok := args.(*pb.BatchRequest); ok {
		for _, call := range req.Calls {
			if h := headerOf(call); h != nil {
				h.FirstAttempt = false
			}
		}
	}
}

// headerOf returns the header of a batch's call.
func headerOf(call *pb.BatchCall) *pb.Header {
	m := call.ProtoReflect()
	fd := m.WhichOneof(batchCallOneof)
	if fd == nil {
		return nil
	}
	if h, ok := m.Get(fd).Message().Interface().(interface{ GetHeader() *pb.Header }); ok {
		return h.GetHeader()
	}
	return nil
}

// batchFields are a batchable method's fields in BatchCall and
// BatchResult.
type batchFields struct{ call, result protoreflect.FieldDescriptor }

var (
	batchCallOneof = (&pb.BatchCall{}).ProtoReflect().Descriptor().Oneofs().ByName("call")
	// batchable are the methods a Batch can carry, by full method name:
	// those whose request type is a field of BatchCall.
	batchable = map[string]batchFields{}
)

func init() {
	results := (&pb.BatchResult{}).ProtoReflect().Descriptor().Fields()
	svc := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	for i := range batchCallOneof.Fields().Len() {
		f := batchCallOneof.Fields().Get(i)
		for j := range svc.Methods().Len() {
			md := svc.Methods().Get(j)
			if md.Input().FullName() == f.Message().FullName() {
				batchable["/"+string(svc.FullName())+"/"+string(md.Name())] = batchFields{f, results.ByName(f.Name())}
			}
		}
	}
}
