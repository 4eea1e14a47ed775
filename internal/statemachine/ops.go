package statemachine

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Kind says how the service carries an operation out.
type Kind uint8

const (
	// Read is answered from the applied state after a read barrier; it is
	// never logged.
	Read Kind = iota + 1
	// Mutation is a client's change: a command in the log, applied once per
	// request id.
	Mutation
	// Internal is a command the service proposes on its own (purges, block
	// garbage, lease expiry, forgetting old answers); no client sends it.
	Internal
)

// Op is one operation of the namespace service: the row of the table that
// says what it does and how it is carried out. The ops are the package's
// variables (Mkdirs, Create, ...); an Op is never modified.
type Op struct {
	// Name is the MetaService method (for an Internal op, the command).
	Name string
	Kind Kind
	// Batchable tells that a Batch may carry it (BatchCall has its request).
	Batchable bool
	// FreesBlocks tells that applying it may queue block garbage.
	FreesBlocks bool
	// Detaches tells that applying it may leave detached subtrees to purge.
	Detaches bool
	// Namespaces tells that applying it may create or delete namespaces.
	Namespaces bool
	// Tokens tells that applying it may change the token state: keys,
	// renewals, revocations.
	Tokens bool
	// Ingests tells that applying it adds tables besides its writes: the
	// service proposes it in an entry of its own, and ApplyEntries stops
	// after it, so that the batch is committed with them (Applied.Ingest).
	Ingests bool
	// Imports tells that applying it may end imports: the members drop
	// the tables they hold of those.
	Imports bool

	request protoreflect.MessageType // the request (or command) message
	cmdType reflect.Type             // its Command.op wrapper
	header  func(*pb.Command) *pb.Header
	apply   func(env, kv.Txn, *pb.Command) (Result, error)
	command func(proto.Message) *pb.Command
	respond func(Result) proto.Message
	read    func(*Machine, kv.Reader, proto.Message) (proto.Message, error)
	keep    func(Result) kvschema.Answer // a mutation's result as kept for retries
	restore func(kvschema.Answer) Result
}

// NewRequest returns a new, empty request (or command message) of op.
func (op *Op) NewRequest() proto.Message { return op.request.New().Interface() }

// Command returns the command that carries out req, a mutation's request
// or an internal command's message.
func (op *Op) Command(req proto.Message) *pb.Command { return op.command(req) }

// Respond returns the response of a mutation whose command produced r
// (r.Err is nil).
func (op *Op) Respond(r Result) proto.Message { return op.respond(r) }

// Read answers read req from the state in r, for the caller its header
// names. The error is an fserr condition.
func (m *Machine) Read(op *Op, r kv.Reader, req proto.Message) (proto.Message, error) {
	return op.read(m, r, req)
}

// Request is a client's request: every one has a header.
type Request interface {
	proto.Message
	GetHeader() *pb.Header
}

// MutationRow is the row of a client's change: its request Req is applied to
// a result of type Res (what a retry of the request is answered from), which
// becomes the response Resp. Its methods are the row's, typed.
type MutationRow[Req Request, Res any, Resp proto.Message] struct{ *Op }

// Command returns the command that carries out req.
func (m MutationRow[Req, Res, Resp]) Command(req Req) *pb.Command { return m.command(req) }

// Result returns what applying the command produced; the zero Res if it
// failed (r.Err).
func (m MutationRow[Req, Res, Resp]) Result(r Result) Res { return valueOf[Res](r) }

// Respond returns the response of a command that produced r (r.Err nil).
func (m MutationRow[Req, Res, Resp]) Respond(r Result) Resp { return m.respond(r).(Resp) }

// InternalRow is the row of a command of the service's own, Cmd, applied to a
// result of type Res.
type InternalRow[Cmd proto.Message, Res any] struct{ *Op }

// Command returns the command that carries c.
func (i InternalRow[Cmd, Res]) Command(c Cmd) *pb.Command { return i.command(c) }

// Result returns what applying the command produced; the zero Res if it
// failed (r.Err).
func (i InternalRow[Cmd, Res]) Result(r Result) Res { return valueOf[Res](r) }

// ReadRow is the row of a read: request Req, answered with Resp.
type ReadRow[Req Request, Resp proto.Message] struct{ *Op }

// Read answers req from the state in r, for the caller its header names.
func (q ReadRow[Req, Resp]) Read(m *Machine, r kv.Reader, req Req) (Resp, error) {
	resp, err := q.read(m, r, req)
	if err != nil {
		var none Resp
		return none, err
	}
	return resp.(Resp), nil
}

// None is the result of a command that produces nothing but its success.
type None struct{}

// mutation returns the row of a client's change: wrap puts its request in a
// command, get takes it out, apply applies it, respond answers it, and kept
// says what of its result a retry is answered from (requests.go).
func mutation[Req Request, Res any, Resp proto.Message](o Op, wrap func(Req) *pb.Command, get func(*pb.Command) Req,
	apply func(env, kv.Txn, Req) (Res, error), respond func(Res) Resp, k kept[Res]) MutationRow[Req, Res, Resp] {
	o.Kind = Mutation
	o.header = func(c *pb.Command) *pb.Header { return get(c).GetHeader() }
	o.respond = func(r Result) proto.Message { return respond(valueOf[Res](r)) }
	o.keep = func(r Result) kvschema.Answer { return k.keep(valueOf[Res](r)) }
	o.restore = func(a kvschema.Answer) Result { return Result{value: k.restore(a)} }
	return MutationRow[Req, Res, Resp]{command(&o, wrap, get, apply)}
}

// internal returns the row of a command of the service's own.
func internal[Cmd proto.Message, Res any](o Op, wrap func(Cmd) *pb.Command, get func(*pb.Command) Cmd,
	apply func(env, kv.Txn, Cmd) (Res, error)) InternalRow[Cmd, Res] {
	o.Kind = Internal
	o.header = func(*pb.Command) *pb.Header { return nil }
	return InternalRow[Cmd, Res]{command(&o, wrap, get, apply)}
}

func command[Msg proto.Message, Res any](o *Op, wrap func(Msg) *pb.Command, get func(*pb.Command) Msg,
	apply func(env, kv.Txn, Msg) (Res, error)) *Op {
	var zero Msg
	o.request = zero.ProtoReflect().Type()
	o.cmdType = reflect.TypeOf(wrap(zero).GetOp())
	o.apply = func(e env, tx kv.Txn, c *pb.Command) (Result, error) {
		v, err := apply(e, tx, get(c))
		return Result{value: v}, err
	}
	o.command = func(m proto.Message) *pb.Command { return wrap(m.(Msg)) }
	return register(o)
}

// query returns the row of a read: fn answers it for the caller in the
// request's header, in the namespace it names.
func query[Req Request, Resp proto.Message](o Op,
	fn func(m *Machine, r kv.Reader, c namespace.Caller, ns string, req Req) (Resp, error)) ReadRow[Req, Resp] {
	o.Kind = Read
	var zero Req
	o.request = zero.ProtoReflect().Type()
	o.read = func(m *Machine, r kv.Reader, msg proto.Message) (proto.Message, error) {
		req := msg.(Req)
		return fn(m, r, CallerOf(req.GetHeader()), req.GetHeader().GetNamespace(), req)
	}
	return ReadRow[Req, Resp]{register(&o)}
}

var (
	all       []*Op
	byMethod  = map[string]*Op{}
	byCommand = map[reflect.Type]*Op{}
	byCall    = map[protoreflect.Name]*Op{} // by BatchCall field
)

func register(o *Op) *Op {
	all = append(all, o)
	if o.Kind != Internal {
		byMethod[o.Name] = o
	}
	if o.cmdType != nil {
		byCommand[o.cmdType] = o
	}
	return o
}

// Ops returns every operation, in the table's order.
func Ops() []*Op { return append([]*Op(nil), all...) }

// ByMethod returns the operation of MetaService method name (short, as
// "Create"), or nil for a method that is the service's alone (Status,
// membership, workers, leases' renewal, Batch).
func ByMethod(name string) *Op { return byMethod[name] }

// opOf returns the operation of a command, or nil.
func opOf(cmd *pb.Command) *Op { return byCommand[reflect.TypeOf(cmd.GetOp())] }

var callOneof = (&pb.BatchCall{}).ProtoReflect().Descriptor().Oneofs().ByName("call")

// OfCall returns the operation a batch's call makes and its request, or
// nil for a call of no kind this service knows.
func OfCall(c *pb.BatchCall) (*Op, proto.Message) {
	m := c.ProtoReflect()
	f := m.WhichOneof(callOneof)
	if f == nil {
		return nil, nil
	}
	return byCall[f.Name()], m.Get(f).Message().Interface()
}

// CallName names the field of BatchCall that call c sets (and of
// BatchResult that its answer sets); "" for an empty call.
func CallName(c *pb.BatchCall) protoreflect.Name {
	if f := c.ProtoReflect().WhichOneof(callOneof); f != nil {
		return f.Name()
	}
	return ""
}

// init ties each BatchCall field to its operation by request type, and
// checks the table's Batchable against it.
func init() {
	fields := callOneof.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		for _, o := range all {
			if o.Kind != Internal && o.request.Descriptor().FullName() == f.Message().FullName() {
				byCall[f.Name()] = o
			}
		}
	}
	for _, o := range all {
		if inBatch := byCall[protoreflect.Name(snake(o.Name))] == o; inBatch != o.Batchable {
			panic(fmt.Sprintf("statemachine: op %s: Batchable is %v, BatchCall says %v", o.Name, o.Batchable, inBatch))
		}
	}
}

// snake turns a method name into its field name: GetFileStatus,
// get_file_status.
func snake(s string) string {
	var b []byte
	for i, r := range []byte(s) {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b = append(b, '_')
			}
			r += 'a' - 'A'
		}
		b = append(b, r)
	}
	return string(b)
}
