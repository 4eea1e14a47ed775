package client

import (
	"context"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Trace ids (internal/trace): every call to the namespace service carries
// one in its header, the id of its context or a new one, and the calls to
// the workers made for a file (its open or create, then the reads and
// writes of its blocks) share the file's, in their gRPC metadata and
// short-circuit requests. The services log their slow calls with it, so
// that one operation is followed through the service and the workers.

// traced returns ctx with a trace id (its own, or a new one) that the
// workers' calls made with it carry.
func traced(ctx context.Context) context.Context {
	if trace.FromContext(ctx) != "" {
		return trace.Outgoing(ctx)
	}
	ctx, _ = trace.Ensure(ctx)
	return trace.Outgoing(ctx)
}

// withTraceID gives a request's header (a copy: headers are shared between
// requests) ctx's trace id, or a new one, unless it has one already.
func withTraceID(ctx context.Context, args any) {
	msg, ok := args.(proto.Message)
	if !ok {
		return
	}
	r := msg.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("header")
	if fd == nil || fd.Kind() != protoreflect.MessageKind || !r.Has(fd) {
		return
	}
	h, ok := r.Get(fd).Message().Interface().(*pb.Header)
	if !ok || h.GetTraceId() != "" {
		return
	}
	id := trace.FromContext(ctx)
	if id == "" {
		id = trace.New()
	}
	// NB: field by field, not proto.Clone: this is on every call's path.
	r.Set(fd, protoreflect.ValueOfMessage((&pb.Header{Namespace: h.Namespace, User: h.User, Groups: h.Groups,
		ClientName: h.ClientName, RequestId: h.RequestId, FirstAttempt: h.FirstAttempt, TraceId: id}).ProtoReflect()))
}
