package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// SlowCalls logs the calls that took its threshold or longer, with what
// lets an operator follow them (the trace id, the caller, the path), and
// keeps the latest for the status page. Safe for concurrent use.
type SlowCalls struct {
	log       *slog.Logger
	threshold time.Duration
	mu        sync.Mutex
	recent    []SlowCall // the latest, oldest first
}

// SlowCall is one slow call.
type SlowCall struct {
	At        time.Time
	Method    string
	Took      time.Duration
	Class     string // "OK", or the failure's reason
	Trace     string // the trace id ("" if it had none; a batch's: its calls', comma-separated)
	User      string
	Namespace string
	Path      string
}

// maxSlowCalls bounds the slow calls kept.
const maxSlowCalls = 64

func newSlowCalls(log *slog.Logger, threshold time.Duration) *SlowCalls {
	if log == nil {
		log = slog.Default()
	}
	if threshold <= 0 {
		threshold = time.Second
	}
	return &SlowCalls{log: log, threshold: threshold}
}

// Threshold is how long a call takes to count as slow.
func (s *SlowCalls) Threshold() time.Duration { return s.threshold }

// add logs a slow call of method and keeps it; req is its request (nil
// for a stream, whose trace id is in its metadata).
func (s *SlowCalls) add(ctx context.Context, method string, req any, d time.Duration, err error) {
	c := SlowCall{At: time.Now(), Method: method, Took: d, Class: rpcerr.Reason(err)}
	describe(&c, req)
	if c.Trace == "" {
		c.Trace = trace.Incoming(ctx)
	}
	if len(c.Trace) > 4*trace.MaxLen { // what a call says is not trusted to be short
		c.Trace = c.Trace[:4*trace.MaxLen]
	}
	attrs := []any{"method", method, "took", d.Round(time.Microsecond), "class", c.Class}
	for _, a := range [][2]string{{"trace", c.Trace}, {"user", c.User}, {"namespace", c.Namespace}, {"path", c.Path}} {
		if a[1] != "" {
			attrs = append(attrs, a[0], a[1])
		}
	}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	s.log.Warn("slow call", attrs...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) == maxSlowCalls {
		s.recent = append(s.recent[:0], s.recent[1:]...)
	}
	s.recent = append(s.recent, c)
}

// Recent returns the latest slow calls, oldest first.
func (s *SlowCalls) Recent() []SlowCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SlowCall(nil), s.recent...)
}

type headed interface{ GetHeader() *pb.Header }

type pathed interface{ GetPath() string }

// maxBatchTraces bounds the trace ids a slow batch is logged with.
const maxBatchTraces = 8

// describe fills in what c's request says of it: its trace id, caller,
// namespace and path; a batch's trace ids are its calls'.
func describe(c *SlowCall, req any) {
	if h, ok := req.(headed); ok {
		hd := h.GetHeader()
		c.Trace, c.User, c.Namespace = hd.GetTraceId(), hd.GetUser(), hd.GetNamespace()
	}
	if p, ok := req.(pathed); ok {
		c.Path = p.GetPath()
	}
	b, ok := req.(*pb.BatchRequest)
	if !ok {
		return
	}
	var ids []byte
	for i, call := range b.GetCalls() {
		if i == maxBatchTraces {
			ids = append(ids, ",..."...)
			break
		}
		if id := batchedTrace(call); id != "" {
			if len(ids) > 0 {
				ids = append(ids, ',')
			}
			ids = append(ids, id...)
		}
	}
	c.Trace = string(ids)
}

// batchedTrace is the trace id of a batch's call: its request's header's.
func batchedTrace(call *pb.BatchCall) string {
	var id string
	call.ProtoReflect().Range(func(_ protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if m, ok := v.Interface().(protoreflect.Message); ok {
			if h, ok := m.Interface().(headed); ok {
				id = h.GetHeader().GetTraceId()
			}
		}
		return false
	})
	return id
}
