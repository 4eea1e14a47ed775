// Package clienttest stands in for the namespace service and the workers in
// the clients' tests: fake members of the service's Raft group (Member),
// each serving MetaService over callwire and gRPC on a loopback port of its
// own, and fake workers serving reads, scripted by the lines of the
// failover, retry, batching and worker scripts that the Go and the Java
// client both run (internal/client/testdata/scripts; the language: its
// README). It holds no namespace: a leader answers every call with its
// response's default, or as a script says; a follower answers NOT_LEADER.
// What each member and worker received goes to one log, in order, which
// the scripts' "got" lines check. It is not a test of the service: the
// service's own tests are internal/metaserver's.
//
// java/core's io.strata.core.testing.ScriptedMembers (over FakeMember and
// FakeWorker) is its Java twin, run by the Java client's ScriptTest on the
// same scripts.
package clienttest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Member is one fake member. Safe for concurrent use.
type Member struct {
	name  string
	group *Group
	lis   *switchListener
	srv   *grpc.Server
	cw    *callwire.Server

	mu struct {
		sync.Mutex
		leader  string // "": it leads; else the name of the member it names, or nobody
		rules   []*rule
		files   map[string]file // what an Open of each path answers
		release chan struct{}   // closed by Release: the calls held go on
	}
}

// nobody is the leader a follower names during an election: none.
const nobody = "nobody"

// rule is what a member does with the calls of one method on one path.
type rule struct {
	method, path string
	action       string // answer, drop or hold
	answer       string // NOT_FOUND, ALREADY_EXISTS or NOT_LEADER
	once         bool
}

// errDropped is what a dropped call returns, on a connection already
// closed: its client sees the connection fail, not this.
var errDropped = errors.New("clienttest: the call was dropped")

// start serves a new member on a free loopback port.
func start(g *Group, name string) (*Member, error) {
	lis, err := newSwitchListener()
	if err != nil {
		return nil, err
	}
	m := &Member{name: name, group: g, lis: lis}
	m.mu.release = make(chan struct{})
	desc := m.serviceDesc()
	m.srv = grpc.NewServer()
	m.srv.RegisterService(desc, m)
	m.cw = callwire.NewServer(desc, m, nil, nil)
	split := m.cw.Split(lis)
	go func() { _ = m.srv.Serve(split) }()
	return m, nil
}

// Addr is the member's host:port.
func (m *Member) Addr() string { return m.lis.addr }

// stop ends the member for good.
func (m *Member) stop() {
	m.Release()
	m.srv.Stop()
	m.cw.Close()
	m.lis.Close()
}

// Lead makes m answer calls.
func (m *Member) Lead() { m.follow("") }

// Follow makes m answer every call NOT_LEADER, naming the member leader
// (nobody: none).
func (m *Member) Follow(leader string) { m.follow(leader) }

func (m *Member) follow(leader string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.leader = leader
}

// Release lets the calls held go on, and those that come later.
func (m *Member) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.mu.release:
	default:
		close(m.mu.release)
	}
}

// addRule adds r; a hold makes the member hold calls again.
func (m *Member) addRule(r *rule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.action == "hold" {
		select {
		case <-m.mu.release:
			m.mu.release = make(chan struct{})
		default:
		}
	}
	m.mu.rules = append(m.mu.rules, r)
}

// serviceDesc is MetaService's unary methods, each handled by handle.
func (m *Member) serviceDesc() *grpc.ServiceDesc {
	svc := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	desc := &grpc.ServiceDesc{ServiceName: string(svc.FullName()), HandlerType: (*any)(nil)}
	for i := range svc.Methods().Len() {
		md := svc.Methods().Get(i)
		if md.IsStreamingClient() || md.IsStreamingServer() {
			continue
		}
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: string(md.Name()), Handler: m.handler(md)})
	}
	return desc
}

// handler decodes a call of md's and answers it with handle.
func (m *Member) handler(md protoreflect.MethodDescriptor) grpc.MethodHandler {
	in, err1 := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	out, err2 := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err := errors.Join(err1, err2); err != nil {
		panic(err) // the generated code registers every message of the service
	}
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		req := in.New().Interface()
		if err := dec(req); err != nil {
			return nil, err
		}
		return m.handle(ctx, string(md.Name()), req, out.New().Interface())
	}
}

// handle logs a call and answers it: NOT_LEADER as a follower; else a
// Batch call by call, any other as its rule says or with resp, its
// response's default.
func (m *Member) handle(ctx context.Context, method string, req, resp proto.Message) (proto.Message, error) {
	m.group.received(m.name, method, req)
	m.mu.Lock()
	leader := m.mu.leader
	m.mu.Unlock()
	if leader != "" {
		return nil, rpcerr.ToStatus(fserr.NotLeader(m.group.addrOf(leader)))
	}
	if b, ok := req.(*pb.BatchRequest); ok {
		return m.batch(ctx, b)
	}
	if err := m.apply(ctx, method, pathOf(req)); err != nil {
		return nil, err
	}
	return m.fill(req, resp), nil
}

// fill makes resp, a default response, what a leader answers req with: a
// stat's status (one the clients can read: Go's takes its fields), the
// group's workers, a scripted file's blocks.
func (m *Member) fill(req, resp proto.Message) proto.Message {
	switch r := resp.(type) {
	case *pb.GetFileStatusResponse:
		r.Status = &pb.FileStatus{Name: baseName(pathOf(req)), Type: pb.FileType_FILE_TYPE_DIRECTORY}
	case *pb.ListWorkersResponse:
		r.Workers = m.group.workerInfos()
	case *pb.OpenResponse:
		m.mu.Lock()
		f, ok := m.mu.files[pathOf(req)]
		m.mu.Unlock()
		if ok {
			return f.open(baseName(pathOf(req)))
		}
	}
	return resp
}

// has makes an Open of path answer a file: "has PATH inode N blocks K".
func (m *Member) has(args []string) error {
	var f file
	var path string
	if n, err := fmt.Sscanf(strings.Join(args, " "), "%s inode %d blocks %d", &path, &f.inode, &f.blocks); n != 3 || err != nil {
		return fmt.Errorf("has: want PATH inode N blocks K, got %v", args)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.files == nil {
		m.mu.files = map[string]file{}
	}
	m.mu.files[path] = f
	return nil
}

// batch answers each call of b as if it came alone.
func (m *Member) batch(ctx context.Context, b *pb.BatchRequest) (*pb.BatchResponse, error) {
	resp := &pb.BatchResponse{}
	for _, c := range b.Calls {
		method, req := batchCall(c)
		r := &pb.BatchResult{}
		if err := m.apply(ctx, method, pathOf(req)); errors.Is(err, errDropped) {
			return nil, err
		} else if err != nil {
			r.Error = errorBytes(err)
		} else {
			setResult(r, m.fill(req, newResponse(req)))
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// apply does what m's first rule for method on path says: nothing (the
// call is answered), a failure to answer, a drop, or a hold.
func (m *Member) apply(ctx context.Context, method, path string) error {
	r, release := m.ruleFor(method, path)
	if r == nil {
		return nil
	}
	switch r.action {
	case "drop":
		m.lis.dropConns()
		return errDropped
	case "hold":
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return rpcerr.ToStatus(answerError(r.answer, method, path))
}

// ruleFor returns the first rule for method on path, spent if it held
// once, and the channel that ends a hold.
func (m *Member) ruleFor(method, path string) (*rule, chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.mu.rules {
		if r.method == method && r.path == path {
			if r.once {
				m.mu.rules = append(m.mu.rules[:i:i], m.mu.rules[i+1:]...)
			}
			return r, m.mu.release
		}
	}
	return nil, nil
}

// answerError is the error a rule's answer stands for, as the service
// words it.
func answerError(answer, method, path string) error {
	op := strings.ToLower(method) + " " + path
	switch answer {
	case "NOT_FOUND":
		return fserr.Errorf(fserr.ErrNotFound, "%s: no such file or directory", op)
	case "ALREADY_EXISTS":
		return fserr.Errorf(fserr.ErrExists, "%s: file exists", op)
	default: // NOT_LEADER, checked by the parser
		return fserr.NotLeader("")
	}
}

// pathOf is the path a request names: its path, or a rename's source; a
// worker's read names its block, "INODE/BLOCK".
func pathOf(req proto.Message) string {
	if rr, ok := req.(*pb.ReadRequest); ok {
		return fmt.Sprintf("%d/%d", rr.GetBlock().GetInodeId(), rr.GetBlock().GetBlockId())
	}
	r := req.ProtoReflect()
	for _, name := range []protoreflect.Name{"path", "src"} {
		if fd := r.Descriptor().Fields().ByName(name); fd != nil && fd.Kind() == protoreflect.StringKind {
			return r.Get(fd).String()
		}
	}
	return ""
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// switchListener is a member's listener: serving, down (it takes each
// connection and closes it at once, counting it) or refusing (nothing
// listens on its port). It keeps the connections it handed out, to close
// them when the member drops a call or goes down.
type switchListener struct {
	addr  string
	conns chan net.Conn
	done  chan struct{}

	mu struct {
		sync.Mutex
		lis     net.Listener // nil while refusing
		down    bool
		tried   int           // connections closed at once while down
		changed chan struct{} // closed when tried grows
		open    []net.Conn
		closed  bool
	}
}
