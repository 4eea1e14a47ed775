package statemachine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestScripts runs the scripts in testdata/: each case names an operation
// of the table and gives its request in protobuf text (without the header),
// and the expected answer is the response, or the error. `go test
// -run TestScripts -rewrite` writes the answers of today's code into the
// files, to be read before they are committed.
//
// A case's arguments fill in the header: user= (default super), groups=,
// ns=, client= (the lease holder), rid= (a request id; with retry, the
// request is not a first attempt), now= (the command's time, default one
// more than the last), trash= (the namespace trash time, in ms, of the
// settings the command is stamped with; default 0). Operations are applied
// to one store per file, in order; Internal ops take their command message.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := newScript(t)
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	m     *statemachine.Machine
	store *kv.Mem
	now   int64
	trash int64 // the namespace trash time of the next command
}

func newScript(t *testing.T) *script {
	s := &script{m: statemachine.New(namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16,
		BlockSize: 1 << 20}), store: kv.NewMem(), now: 1000}
	info := &pb.NamespaceInfo{Name: namespace.DefaultNamespace, Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK,
		StoreUri: "file:///bucket"}
	out := s.apply(t, statemachine.CreateNamespace.Op, &pb.CreateNamespaceRequest{Header: &pb.Header{User: "super"},
		Namespace: info})
	if out != "ok\n" {
		t.Fatalf("create the default namespace: %s", out)
	}
	return s
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	op := opNamed(td.Cmd)
	if op == nil {
		return fmt.Sprintf("no operation %q\n", td.Cmd)
	}
	req := s.request(t, td, op)
	if op.Kind == statemachine.Read {
		resp, err := s.m.Read(op, s.store, req)
		if err == nil { // as a client receives it (List's entries are pre-encoded)
			resp, err = statemachine.WireForm(resp)
		}
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return format(resp.ProtoReflect())
	}
	return s.apply(t, op, req)
}

// request parses the case's request and fills in its header.
func (s *script) request(t *testing.T, td *datadriven.TestData, op *statemachine.Op) proto.Message {
	req := op.NewRequest()
	if err := prototext.Unmarshal([]byte(td.Input), req); err != nil {
		td.Fatalf(t, "request: %v", err)
	}
	s.now++
	h := &pb.Header{User: "super", Namespace: ""}
	for _, a := range td.CmdArgs {
		v := strings.Join(a.Vals, ",")
		switch a.Key {
		case "user":
			h.User = v
		case "groups":
			h.Groups = a.Vals
		case "ns":
			h.Namespace = v
		case "client":
			h.ClientName = v
		case "rid":
			h.RequestId, h.FirstAttempt = []byte(v), true
		case "retry":
			h.FirstAttempt = false
		case "now":
			td.ScanArgs(t, "now", &s.now)
		case "trash":
			td.ScanArgs(t, "trash", &s.trash)
		default:
			td.Fatalf(t, "unknown argument %q", a.Key)
		}
	}
	if f := req.ProtoReflect().Descriptor().Fields().ByName("header"); f != nil {
		req.ProtoReflect().Set(f, protoreflect.ValueOfMessage(h.ProtoReflect()))
	}
	return req
}

// apply applies the command of op for req and commits it; it returns the
// response or the error.
func (s *script) apply(t *testing.T, op *statemachine.Op, req proto.Message) string {
	cmd := op.Command(req)
	cmd.Now, cmd.Settings = s.now, proto.CloneOf(s.m.Settings())
	cmd.Settings.NamespaceTrashMs, s.trash = s.trash, 0
	tx := kv.NewOverlay(s.store)
	rs, err := s.m.Apply(tx, cmd)
	if err != nil {
		t.Fatalf("%s: the state machine failed: %v", op.Name, err)
	}
	tx.ApplyTo(s.store)
	switch r := rs[0]; {
	case r.Err != nil:
		return "error: " + r.Err.Error() + "\n"
	case op.Kind == statemachine.Internal && r.Value() == statemachine.None{}:
		return "ok\n"
	case op.Kind == statemachine.Internal:
		return fmt.Sprintf("result: %v\n", r.Value())
	default:
		return format(op.Respond(r).ProtoReflect())
	}
}

func opNamed(name string) *statemachine.Op {
	for _, op := range statemachine.Ops() {
		if op.Name == name {
			return op
		}
	}
	return nil
}

// format prints m's set fields in field order, a line each, messages
// nested with indentation: protobuf's text format varies its spacing from
// build to build on purpose, so expected output cannot use it.
func format(m protoreflect.Message) string {
	var b strings.Builder
	formatTo(&b, m, "")
	if b.Len() == 0 {
		return "ok\n"
	}
	return b.String()
}

func formatTo(b *strings.Builder, m protoreflect.Message, indent string) {
	var fields []protoreflect.FieldDescriptor
	m.Range(func(f protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fields = append(fields, f)
		return true
	})
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number() - b.Number()) })
	for _, f := range fields {
		v := m.Get(f)
		switch {
		case f.IsList():
			for i := range v.List().Len() {
				formatValue(b, f, v.List().Get(i), indent)
			}
		default:
			formatValue(b, f, v, indent)
		}
	}
}

func formatValue(b *strings.Builder, f protoreflect.FieldDescriptor, v protoreflect.Value, indent string) {
	switch f.Kind() {
	case protoreflect.MessageKind:
		fmt.Fprintf(b, "%s%s:\n", indent, f.Name())
		formatTo(b, v.Message(), indent+"  ")
	case protoreflect.EnumKind:
		fmt.Fprintf(b, "%s%s: %s\n", indent, f.Name(), f.Enum().Values().ByNumber(v.Enum()).Name())
	case protoreflect.BytesKind:
		fmt.Fprintf(b, "%s%s: %q\n", indent, f.Name(), v.Bytes())
	case protoreflect.StringKind:
		fmt.Fprintf(b, "%s%s: %q\n", indent, f.Name(), v.String())
	default:
		if f.Name() == "permission" {
			fmt.Fprintf(b, "%s%s: %#o\n", indent, f.Name(), v.Uint())
			return
		}
		fmt.Fprintf(b, "%s%s: %v\n", indent, f.Name(), v.Interface())
	}
}
