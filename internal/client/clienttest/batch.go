package clienttest

import (
	"strings"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

var (
	batchCallOneof = (&pb.BatchCall{}).ProtoReflect().Descriptor().Oneofs().ByName("call")
	batchResults   = (&pb.BatchResult{}).ProtoReflect().Descriptor().Fields()
)

// batchCall returns the method of a batch's call ("Mkdirs": its request's
// name less "Request") and its request.
func batchCall(c *pb.BatchCall) (string, proto.Message) {
	m := c.ProtoReflect()
	fd := m.WhichOneof(batchCallOneof)
	if fd == nil {
		return "", &pb.BatchCall{}
	}
	return strings.TrimSuffix(string(fd.Message().Name()), "Request"), m.Get(fd).Message().Interface()
}

// newResponse returns the default response of req's call.
func newResponse(req proto.Message) proto.Message {
	name := strings.TrimSuffix(string(req.ProtoReflect().Descriptor().FullName()), "Request") + "Response"
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		panic(err) // every call a batch carries has its response
	}
	return mt.New().Interface()
}

// setResult sets r's result to resp, the response of its call.
func setResult(r *pb.BatchResult, resp proto.Message) {
	rm := r.ProtoReflect()
	for i := range batchResults.Len() {
		if fd := batchResults.Get(i); fd.Message() != nil && fd.Message().FullName() == resp.ProtoReflect().Descriptor().FullName() {
			rm.Set(fd, protoreflect.ValueOfMessage(resp.ProtoReflect()))
		}
	}
}

// errorBytes is err as a batch result carries it: a serialized
// google.rpc.Status.
func errorBytes(err error) []byte {
	b, err := proto.Marshal(status.Convert(err).Proto())
	if err != nil {
		panic(err) // a status of a code, a message and an ErrorInfo
	}
	return b
}
