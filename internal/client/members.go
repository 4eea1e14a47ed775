package client

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// DefaultRetryTimeout bounds how long a call keeps looking for a leader
// (an election takes about a second; a restart a few).
const DefaultRetryTimeout = 30 * time.Second

// members is a grpc.ClientConnInterface over the namespace service's
// members: a call goes to the member the client last found leading; on
// NOT_LEADER it moves to the leader named, on a transport failure to the
// next member, backing off once it has tried them all. Mutations carry a
// request id, the same on every retry, so that the service applies each
// one once however often it is sent.
type members struct {
	addrs        []string
	retryTimeout time.Duration

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	leader string
}

func newMembers(list string, retryTimeout time.Duration) (*members, error) {
	m := &members{conns: map[string]*grpc.ClientConn{}, retryTimeout: retryTimeout}
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			m.addrs = append(m.addrs, a)
		}
	}
	if len(m.addrs) == 0 {
		return nil, errors.New("client: no namespace service address (set --meta or STRATA_META)")
	}
	if m.retryTimeout == 0 {
		m.retryTimeout = DefaultRetryTimeout
	}
	m.leader = m.addrs[0]
	return m, nil
}

func (m *members) conn(addr string) (*grpc.ClientConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		return c, nil
	}
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", addr, err)
	}
	m.conns[addr] = c
	return c, nil
}

func (m *members) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, c := range m.conns {
		errs = append(errs, c.Close())
	}
	m.conns = nil
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
	var h *pb.Header // a mutation's header, with its request id
	fresh := false   // the id is this call's: its first attempt is the first
	if mutations[method] {
		h, fresh = withRequestID(args)
	}
	deadline := time.Now().Add(m.retryTimeout)
	backoff := 10 * time.Millisecond
	target := m.current()
	misses := 0 // members tried since the last backoff
	for attempt := 0; ; attempt++ {
		if h != nil {
			h.FirstAttempt = fresh && attempt == 0
		}
		if attempt > 0 {
			sentBefore(args)
		}
		conn, err := m.conn(target)
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
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (no leader found among %s within %v)", err, strings.Join(m.addrs, ", "), m.retryTimeout)
		}
		next := fserr.LeaderOf(rpcerr.FromStatus(err))
		if next == "" || next == target {
			next = m.after(target)
			misses++
		}
		if misses >= len(m.addrs) {
			misses = 0
			if err := sleep(ctx, backoff/2+rand.N(backoff/2+1)); err != nil {
				return err
			}
			backoff = min(2*backoff, 500*time.Millisecond)
		}
		target = next
	}
}

// NewStream implements grpc.ClientConnInterface. The namespace service has
// no streaming calls; a stream goes to the current leader unretried.
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
