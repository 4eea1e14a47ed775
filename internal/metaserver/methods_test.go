package metaserver_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestEveryMethodIsServed calls every MetaService method of the proto with
// an empty request, as the superuser: none may answer UNIMPLEMENTED (a
// method added to the proto and the table, and forgotten in the handlers).
func TestEveryMethodIsServed(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	conn, err := grpc.NewClient(svc.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(token.Credentials(testcluster.Token(t, svc.Addr, ""))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sd := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		in, out := dynamicpb.NewMessage(md.Input()), dynamicpb.NewMessage(md.Output())
		err := conn.Invoke(context.Background(), "/"+string(sd.FullName())+"/"+string(md.Name()), in, out)
		if status.Code(err) == codes.Unimplemented {
			t.Errorf("%s: %v", md.Name(), err)
		}
	}
}
