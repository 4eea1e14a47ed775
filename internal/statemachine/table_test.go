package statemachine_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestTableAgreesWithTheProto checks the table against what the clients
// read: each MetaService method's method_kind option, and the fields of
// BatchCall and Command.
func TestTableAgreesWithTheProto(t *testing.T) {
	svc := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	for i := range svc.Methods().Len() {
		md := svc.Methods().Get(i)
		kind := proto.GetExtension(md.Options(), pb.E_MethodKind).(pb.MethodKind)
		op := statemachine.ByMethod(string(md.Name()))
		want := map[pb.MethodKind]statemachine.Kind{pb.MethodKind_METHOD_KIND_READ: statemachine.Read,
			pb.MethodKind_METHOD_KIND_MUTATION: statemachine.Mutation}[kind]
		switch {
		case op == nil && want != 0:
			t.Errorf("%s: the proto says %v, the table has no row", md.Name(), kind)
		case op != nil && op.Kind != want:
			t.Errorf("%s: the proto says %v, the table kind %d", md.Name(), kind, op.Kind)
		case op != nil && md.Input() != op.NewRequest().ProtoReflect().Descriptor():
			t.Errorf("%s: takes %s, the table's row %s", md.Name(), md.Input().FullName(),
				op.NewRequest().ProtoReflect().Descriptor().FullName())
		}
	}
	commands := (&pb.Command{}).ProtoReflect().Descriptor().Oneofs().ByName("op").Fields()
	for _, op := range statemachine.Ops() {
		if op.Kind == statemachine.Read {
			continue
		}
		found := false
		for i := range commands.Len() {
			found = found || commands.Get(i).Message() == op.NewRequest().ProtoReflect().Descriptor()
		}
		if !found {
			t.Errorf("%s: no field of Command carries it", op.Name)
		}
		if op.Kind == statemachine.Internal && statemachine.ByMethod(op.Name) != nil {
			t.Errorf("%s: an internal command is found as a method", op.Name)
		}
	}
}

// TestOfCallFindsEveryBatchableOp makes a BatchCall of each batchable op.
func TestOfCallFindsEveryBatchableOp(t *testing.T) {
	calls := []*pb.BatchCall{
		{Call: &pb.BatchCall_Mkdirs{Mkdirs: &pb.MkdirsRequest{}}},
		{Call: &pb.BatchCall_Create{Create: &pb.CreateRequest{}}},
		{Call: &pb.BatchCall_Complete{Complete: &pb.CompleteRequest{}}},
		{Call: &pb.BatchCall_Rename{Rename: &pb.RenameRequest{}}},
		{Call: &pb.BatchCall_Delete{Delete: &pb.DeleteRequest{}}},
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: &pb.GetFileStatusRequest{}}},
		{Call: &pb.BatchCall_Open{Open: &pb.OpenRequest{}}},
	}
	seen := map[*statemachine.Op]bool{}
	for _, c := range calls {
		op, req := statemachine.OfCall(c)
		if op == nil || !op.Batchable || req == nil {
			t.Fatalf("%v: op %v, request %v", c, op, req)
		}
		seen[op] = true
	}
	for _, op := range statemachine.Ops() {
		if op.Batchable && !seen[op] {
			t.Errorf("%s is batchable, and no call above makes it", op.Name)
		}
	}
	if op, _ := statemachine.OfCall(&pb.BatchCall{}); op != nil {
		t.Errorf("an empty call makes %s", op.Name)
	}
}
