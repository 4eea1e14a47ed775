package client

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// DefaultRetryTimeout bounds how long a call keeps looking for a leader
// once the client reached the service (an election takes about a second;
// a restart a few).
const DefaultRetryTimeout = 30 * time.Second

// DefaultConnectTimeout bounds how long a client waits for a first member
// to accept a connection: a wrong address says so quickly.
const DefaultConnectTimeout = 3 * time.Second

// members is a grpc.ClientConnInterface over the namespace service's
// members: a call goes to the member the client last found leading; on
// NOT_LEADER it moves to the leader named, on a transport failure to the
// next member, backing off once it has tried them all. This is the one
// layer that retries the service's calls. Mutations carry a request id, the
// same on every retry, so that the service applies each one once however
// often it is sent.
//
// Two budgets bound the retries. Until some member has accepted a
// connection, nothing may be listening at all (a wrong address, a service
// not started): the first call waits connectTimeout for one, then fails
// naming each address and its cause (contact). After that a failure is a
// failover (a leader change, a member restarting), retried for
// retryTimeout.
type members struct {
	addrs          []string
	retryTimeout   time.Duration
	connectTimeout time.Duration
	reached        atomic.Bool // some member accepted a connection once

	// dialOptions are added to the connections' own (the token's
	// credentials).
	dialOptions []grpc.DialOption
	token       string // the callwire connections' (the gRPC ones carry it in dialOptions)
	grpcOnly    bool   // no callwire: unary calls over gRPC too

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	wires  map[string]*callwire.Pool // the unary calls' connections, by member
	leader string
	// unreached is the error of the last contact that failed, and when:
	// calls made within connectTimeout of it fail at once with it, so that
	// a command with many paths waits once.
	unreached   error
	unreachedAt time.Time
	tls         *tls.Config     // nil: plaintext
	dial        grpc.DialOption // plaintext or TLS
}

func newMembers(list string, retryTimeout, connectTimeout time.Duration, tc *tls.Config) (*members, error) {
	addrs, err := ParseMembers(list)
	if err != nil {
		return nil, err
	}
	m := &members{addrs: addrs, conns: map[string]*grpc.ClientConn{}, wires: map[string]*callwire.Pool{}, tls: tc, dial: tlsconf.Dial(tc),
		retryTimeout: cmp.Or(retryTimeout, DefaultRetryTimeout), connectTimeout: cmp.Or(connectTimeout, DefaultConnectTimeout)}
	m.leader = m.addrs[0]
	return m, nil
}

// noLeader is the error of a call whose retries found no leader in time:
// each member tried and how it failed last, in one line.
func (m *members) noLeader(causes map[string]string) error {
	var tried []string
	for _, a := range m.addrs {
		if c, ok := causes[a]; ok {
			tried = append(tried, a+" ("+c+")")
		}
	}
	for a, c := range causes { // leaders named that were not listed
		if !slices.Contains(m.addrs, a) {
			tried = append(tried, a+" ("+c+")")
		}
	}
	return &rpcerr.TransportError{Code: codes.Unavailable, Msg: fmt.Sprintf(
		"found no leader of the namespace service within %v: %s", m.retryTimeout, strings.Join(tried, ", "))}
}

// memberConnectParams cap the wait between connection attempts to a
// member at 500 ms (and a fifth of jitter). gRPC's default grows to 2
// minutes: a member that was down for a minute and then elected leader
// stayed out of the client's reach for 20 s more, every call refused at
// once while its connection waited out the backoff. The raft transport
// caps its own the same way (internal/raftnode, connectParams).
var memberConnectParams = grpc.ConnectParams{
	Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2,
		MaxDelay: 500 * time.Millisecond},
	MinConnectTimeout: 2 * time.Second,
}

// The static HTTP/2 flow-control windows of the client's connections to
// the members, as the service's own (metaserver.StreamWindow, ConnWindow).
// NB: static, because gRPC's dynamic windows are sized by pinging the
// member after a response's data whenever the last ping has returned: at
// one caller, every call then carried a ping and its acknowledgement.
const (
	memberStreamWindow = 4 << 20
	memberConnWindow   = 16 << 20
)

func (m *members) conn(addr string) (*grpc.ClientConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		return c, nil
	}
	if m.conns == nil {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "client: closed")
	}
	c, err := grpc.NewClient(addr, append([]grpc.DialOption{m.dial, grpc.WithConnectParams(memberConnectParams),
		grpc.WithContextDialer(callwire.DialTCP), // a member cut off fails its calls (callwire.SilentPeerTimeout)
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(callwire.MaxMessage)),
		grpc.WithStaticStreamWindowSize(memberStreamWindow), grpc.WithStaticConnWindowSize(memberConnWindow)},
		m.dialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", addr, err)
	}
	m.conns[addr] = c
	return c, nil
}

// invoker makes unary calls: a gRPC connection or a callwire pool.
type invoker interface {
	Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error
}

// unary returns what the unary calls to addr go through: its callwire pool,
// made now if need be, unless the client is grpcOnly.
func (m *members) unary(addr string) (invoker, error) {
	if m.grpcOnly {
		return m.conn(addr)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wires == nil {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "client: closed")
	}
	w := m.wires[addr]
	if w == nil {
		w = callwire.NewPool(addr, m.tls, m.token)
		m.wires[addr] = w
	}
	return w, nil
}

func (m *members) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, c := range m.conns {
		errs = append(errs, c.Close())
	}
	for _, w := range m.wires {
		errs = append(errs, w.Close())
	}
	m.conns, m.wires = nil, nil
	return errors.Join(errs...)
}

func (m *members) current() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leader
}

func (m *members) found(addr string) {
	m.mu.Lock()
	m.leader = addr
	m.mu.Unlock()
}

// after returns the member after addr in the list.
func (m *members) after(addr string) string {
	for i, a := range m.addrs {
		if a == addr {
			return m.addrs[(i+1)%len(m.addrs)]
		}
	}
	return m.addrs[0]
}

// Invoke implements grpc.ClientConnInterface.
func (m *members) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if err := m.contact(ctx); err != nil {
		return err
	}
	var h *pb.Header // a mutation's header, with its request id
	fresh := false   // the id is this call's: its first attempt is the first
	if mutations[method] {
		h, fresh = withRequestID(args)
	}
	deadline := time.Now().Add(m.retryTimeout)
	pause := 10 * time.Millisecond
	target := m.current()
	misses := 0                   // members tried since the last pause
	causes := map[string]string{} // why each member tried failed last
	for attempt := 0; ; attempt++ {
		if h != nil {
			h.FirstAttempt = fresh && attempt == 0
		}
		if attempt > 0 {
			sentBefore(args)
		}
		conn, err := m.unary(target)
		if err == nil {
			err = conn.Invoke(ctx, method, args, reply, opts...)
		}
		if err == nil {
			m.found(target)
			return nil
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return err
		}
		answer := rpcerr.FromStatus(err)
		causes[target] = answer.Error()
		if time.Now().After(deadline) {
			return m.noLeader(causes)
		}
		next := fserr.LeaderOf(answer)
		if next == "" || next == target {
			next = m.after(target)
			misses++
		}
		if misses >= len(m.addrs) {
			misses = 0
			if err := sleep(ctx, pause/2+rand.N(pause/2+1)); err != nil {
				return err
			}
			pause = min(2*pause, 500*time.Millisecond)
		}
		target = next
	}
}

// NewStream implements grpc.ClientConnInterface. The namespace service's
// one streaming call (UploadImport) goes to the current leader, unretried:
// its caller, which made unary calls first, sends the table again.
func (m *members) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	conn, err := m.conn(m.current())
	if err != nil {
		return nil, err
	}
	return conn.NewStream(ctx, desc, method, opts...)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// mutations are the calls whose requests get a request id.
var mutations = map[string]bool{}

// init reads the mutations off the service's definition: the methods whose
// strata.v1.method_kind option says MUTATION.
func init() {
	svc := pb.File_strata_v1_meta_proto.Services().ByName("MetaService")
	for i := range svc.Methods().Len() {
		md := svc.Methods().Get(i)
		if proto.GetExtension(md.Options(), pb.E_MethodKind) == pb.MethodKind_METHOD_KIND_MUTATION {
			mutations["/"+string(svc.FullName())+"/"+string(md.Name())] = true
		}
	}
}

// withRequestID gives the request's header (a copy: headers are shared
// between requests) a fresh request id, unless it has one, and returns the
// copy and whether the id is fresh; nil for a request without a header.
func withRequestID(args any) (*pb.Header, bool) {
	msg, ok := args.(proto.Message)
	if !ok {
		return nil, false
	}
	r := msg.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("header")
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return nil, false
	}
	h, ok := r.Get(fd).Message().Interface().(*pb.Header)
	if !ok || h == nil {
		return nil, false
	}
	h = proto.Clone(h).(*pb.Header)
	fresh := len(h.RequestId) == 0
	if fresh {
		h.RequestId = newRequestID()
	}
	r.Set(fd, protoreflect.ValueOfMessage(h.ProtoReflect()))
	return h, fresh
}

// requestIDPrefix and requestIDCount make this process's request ids: 8
// random bytes drawn once, then a counter. The ids of one process sort
// together and in order, so that the service, which keeps each mutation's
// answer under its request id, writes those keys next to one another in
// its memtable rather than all over its key space: a tenth less of a
// create's apply than 16 random bytes (BenchmarkApplyCreates).
var (
	requestIDPrefix = func() (p [8]byte) {
		_, _ = crand.Read(p[:])
		return p
	}()
	requestIDCount atomic.Uint64
)

func newRequestID() []byte {
	id := make([]byte, 16)
	copy(id, requestIDPrefix[:])
	binary.BigEndian.PutUint64(id[8:], requestIDCount.Add(1))
	return id
}
