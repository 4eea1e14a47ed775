package metaserver_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestEveryMethodIsServed calls every MetaService method of the proto with
// an empty request, as the superuser, over gRPC and over callwire: none may
// answer UNIMPLEMENTED (a method added to the proto and the table, and
// forgotten in the handlers), and both transports answer alike, but for
// the methods only members may call, and the streams (UploadImport), which
// callwire does not serve.
func TestEveryMethodIsServed(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	tok := testcluster.Token(t, svc.Addr, "")
	conn, err := grpc.NewClient(svc.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(token.Credentials(tok)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cw := callwire.NewPool(svc.Addr, nil, tok)
	defer cw.Close()
	sd := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		method := "/" + string(sd.FullName()) + "/" + string(md.Name())
		call := func(invoke func(context.Context, string, any, any, ...grpc.CallOption) error) error {
			return invoke(context.Background(), method, dynamicpb.NewMessage(md.Input()), dynamicpb.NewMessage(md.Output()))
		}
		gerr, cerr := call(conn.Invoke), call(cw.Invoke)
		membersOnly := md.Name() == "Heartbeat" || md.IsStreamingClient()
		switch {
		case status.Code(gerr) == codes.Unimplemented:
			t.Errorf("%s over gRPC: %v", md.Name(), gerr)
		case membersOnly && status.Code(cerr) != codes.Unimplemented:
			t.Errorf("%s, for members only or a stream, over callwire: %v", md.Name(), cerr)
		case !membersOnly && status.Code(cerr) != status.Code(gerr):
			t.Errorf("%s: over gRPC %v, over callwire %v", md.Name(), gerr, cerr)
		}
	}
}
