package raftnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/privdir"
	spb "github.com/stratafs/strata/proto/strata/v1"
)

// TransportConfig configures a Transport.
type TransportConfig struct {
	ClusterID string
	ID        uint64
	// Address is where this member serves RaftService.
	Address string
	// Members returns the group's members and their addresses as the state
	// machine has them (empty while a joining member has no state yet). It
	// is called for every message; the transport never modifies the map.
	Members func() map[uint64]string
	// Checkpoint writes a copy of the state to dir, for a snapshot.
	Checkpoint func(dir string) error
	// SnapshotDir stages snapshots on their way out and in.
	SnapshotDir string
	// StageDir receives the files other members stage here (stage.go),
	// and Staged checks and keeps those of a staging area, received in
	// dir (which it may move, and which goes once it returns).
	StageDir string
	Staged   func(name, dir string) error
	// Dial is how to dial the other members (nil: plaintext); with TLS,
	// this member's certificate goes with it (tlsconf.Files.Client).
	Dial grpc.DialOption
	Log  *slog.Logger
	// SnapshotSent, if set, hears how each snapshot sent to a member went:
	// how long it took, checkpoint included, and why it failed (nil: it
	// was delivered). For metrics; it must not block.
	SnapshotSent func(to uint64, took time.Duration, err error)
}

func (c *TransportConfig) dial() grpc.DialOption {
	if c.Dial == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	return c.Dial
}

// Transport carries Raft traffic between members over gRPC: it is the
// node's Sender, and it serves RaftService for the other members. Messages
// to a member go out in order, batched, on one StepStream that stays open
// (a unary call per batch cost both sides a stream's setup, headers and an
// answer each time: docs/ha.md has the figures); snapshots are checkpoints
// of the state streamed file by file.
type Transport struct {
	spb.UnimplementedRaftServiceServer

	cfg  TransportConfig
	node atomic.Pointer[Node]

	mu       sync.Mutex
	peers    map[uint64]*peer
	learned  map[uint64]string // addresses senders gave that the state does not have
	refusals map[uint64]string // members that refuse this one, and why
	closed   bool
}

// NewTransport returns a transport; Attach it to the node once started.
func NewTransport(cfg TransportConfig) (*Transport, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	// Anything staged by an earlier run is stale. What is staged, the
	// state's checkpoints, holds the cluster's secrets.
	if err := os.RemoveAll(cfg.SnapshotDir); err != nil {
		return nil, err
	}
	if err := privdir.MkdirAll(cfg.SnapshotDir); err != nil {
		return nil, err
	}
	return &Transport{cfg: cfg, peers: map[uint64]*peer{}, learned: map[uint64]string{}, refusals: map[uint64]string{}}, nil
}

// Attach connects the transport to the node it serves.
func (t *Transport) Attach(n *Node) { t.node.Store(n) }

// Close stops every sender.
func (t *Transport) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, p := range t.peers {
		p.close()
		delete(t.peers, id)
	}
}

// Send implements Sender.
func (t *Transport) Send(msgs []*pb.Message) {
	for _, m := range msgs {
		p := t.peer(m.GetTo())
		if p == nil {
			t.reportUnreachable(m.GetTo())
			continue
		}
		if m.GetType() == pb.MessageType_MsgSnap {
			go t.sendSnapshot(p, m)
			continue
		}
		select {
		case p.queue <- m:
		default: // the member is slow or gone; raft will resend
			t.reportUnreachable(m.GetTo())
		}
	}
}

func (t *Transport) reportUnreachable(id uint64) {
	if n := t.node.Load(); n != nil {
		n.ReportUnreachable(id)
	}
}

func (t *Transport) address(id uint64) string {
	if addr := t.cfg.Members()[id]; addr != "" {
		return addr
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.learned[id]
}

// peer returns the sender to member id, (re)connecting when its address
// changed; nil if the address is unknown.
func (t *Transport) peer(id uint64) *peer {
	addr := t.address(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peers[id]
	if p != nil && p.addr == addr {
		return p
	}
	if p != nil {
		p.close()
		delete(t.peers, id)
	}
	if addr == "" || t.closed {
		return nil
	}
	conn, err := grpc.NewClient(addr, t.cfg.dial(), grpc.WithConnectParams(connectParams),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(callwire.MaxMessage), grpc.MaxCallSendMsgSize(callwire.MaxMessage)))
	if err != nil {
		t.cfg.Log.Warn("raft transport: bad member address", "member", id, "address", addr, "err", err)
		return nil
	}
	p = &peer{id: id, addr: addr, conn: conn, client: spb.NewRaftServiceClient(conn),
		queue: make(chan *pb.Message, 4096), stop: make(chan struct{})}
	t.peers[id] = p
	go t.run(p)
	return p
}

// connectParams bound how long a member that was down waits to be heard
// again once it is back. gRPC's default backoff between connection attempts
// grows 1.6-fold from 1 s to 2 minutes: after 90 s down, a restarted member
// heard nothing from the leader for another 17 to 25 s (issue 22), a
// PreCandidate whose lag grew all the while. Raft sends to every member each
// tick, so the attempts are there to be made: capped at maxConnectBackoff
// (plus jitter), a member is reached within that of serving again. An attempt
// to a dead member on a network that answers costs a refused connection; one
// to a host gone silent is given up after MinConnectTimeout, not gRPC's 20 s.
var connectParams = grpc.ConnectParams{
	Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2,
		MaxDelay: maxConnectBackoff},
	MinConnectTimeout: 2 * time.Second,
}

// maxConnectBackoff is the longest wait between two connection attempts to
// a member (before jitter of up to a fifth of it).
const maxConnectBackoff = 500 * time.Millisecond

// peer sends to one member, in order.
type peer struct {
	id     uint64
	addr   string
	conn   *grpc.ClientConn
	client spb.RaftServiceClient
	queue  chan *pb.Message
	stop   chan struct{}
	once   sync.Once
}

func (p *peer) close() {
	p.once.Do(func() {
		close(p.stop)
		p.conn.Close()
	})
}

// maxBatch bounds the messages of one request.
const maxBatch = 256

// sendTimeout bounds the opening of a stream and each request's send: a
// stream that a member does not answer or stopped reading (it hangs, or
// the network dropped it silently) is given up and opened again, as a
// unary call would have timed out.
var sendTimeout = 5 * time.Second

func (t *Transport) run(p *peer) {
	var s *stepStream
	defer func() { s.close() }()
	batch := make([][]byte, 0, maxBatch)
	for {
		var m *pb.Message
		select {
		case <-p.stop:
			return
		case m = <-p.queue:
		}
		batch = batch[:0]
		for m != nil {
			if data, err := proto.Marshal(m); err == nil {
				batch = append(batch, data)
			}
			m = nil
			if len(batch) < maxBatch {
				select {
				case m = <-p.queue:
				default:
				}
			}
		}
		if s == nil {
			s = openStepStream(p.client)
		}
		err := s.send(&spb.StepRequest{ClusterId: t.cfg.ClusterID, From: t.cfg.ID, To: p.id,
			FromAddress: t.cfg.Address, Messages: batch})
		if err != nil {
			s = nil // the next batch opens another
		}
		t.delivered(p.id, err)
	}
}

// stepStream is a sender's StepStream to one member.
type stepStream struct {
	cancel context.CancelFunc
	stream grpc.ClientStreamingClient[spb.StepRequest, spb.StepResponse]
	err    error // opening failed
}

// openStepStream opens a stream, giving up after sendTimeout as a send
// does (a member that cannot be reached leaves a connection attempt
// pending for longer).
func openStepStream(c spb.RaftServiceClient) *stepStream {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(sendTimeout, cancel)
	stream, err := c.StepStream(ctx)
	timer.Stop()
	return &stepStream{cancel: cancel, stream: stream, err: err}
}

// send sends r. An error ends the stream: it is the receiver's refusal
// (its status) or the stream's failure.
func (s *stepStream) send(r *spb.StepRequest) error {
	err := s.err
	if err == nil {
		timer := time.AfterFunc(sendTimeout, s.cancel)
		err = s.stream.Send(r)
		timer.Stop()
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		// The receiver ended the stream; why is in its status.
		_, err = s.stream.CloseAndRecv()
		if err == nil {
			err = errors.New("raft transport: the member closed the stream")
		}
	}
	s.cancel()
	return err
}

func (s *stepStream) close() {
	if s != nil {
		s.cancel()
	}
}

// delivered records how a call to member id went. A member that refuses
// this one (another cluster, or a configuration without this member) is
// remembered; when a majority of the others refuse, this member cannot
// take part and stops with their reason.
func (t *Transport) delivered(id uint64, err error) {
	if err == nil {
		t.mu.Lock()
		delete(t.refusals, id)
		t.mu.Unlock()
		return
	}
	t.reportUnreachable(id)
	if status.Code(err) != codes.FailedPrecondition {
		return
	}
	reason := status.Convert(err).Message()
	t.mu.Lock()
	_, known := t.refusals[id]
	t.refusals[id] = reason
	refused := len(t.refusals)
	t.mu.Unlock()
	if !known {
		t.cfg.Log.Error("raft transport: refused by a member", "member", id, "reason", reason)
	}
	others := 0
	for m := range t.cfg.Members() {
		if m != t.cfg.ID {
			others++
		}
	}
	if refused >= others/2+1 {
		if n := t.node.Load(); n != nil {
			n.Fail(t.refusedError())
		}
	}
}

// ErrRefused is the cause of a member's stop when the others refuse it.
var ErrRefused = errors.New("refused by the other members")

func (t *Transport) refusedError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]uint64, 0, len(t.refusals))
	for id := range t.refusals {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("member %d: %s", id, t.refusals[id]))
	}
	return fmt.Errorf("member %d %w (%s)", t.cfg.ID, ErrRefused, strings.Join(parts, "; "))
}

// Step implements RaftService.
func (t *Transport) Step(ctx context.Context, r *spb.StepRequest) (*spb.StepResponse, error) {
	if err := t.step(ctx, r); err != nil {
		return nil, err
	}
	return &spb.StepResponse{}, nil
}

// StepStream implements RaftService.
func (t *Transport) StepStream(stream spb.RaftService_StepStreamServer) error {
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&spb.StepResponse{})
		}
		if err != nil {
			return err
		}
		if err := t.step(stream.Context(), r); err != nil {
			return err
		}
	}
}

// step admits a request's sender and hands its messages to the node.
func (t *Transport) step(ctx context.Context, r *spb.StepRequest) error {
	if err := t.admit(r.ClusterId, r.From, r.FromAddress); err != nil {
		return err
	}
	n := t.node.Load()
	if n == nil {
		return status.Error(codes.Unavailable, "member is starting")
	}
	for _, data := range r.Messages {
		m := &pb.Message{}
		if err := proto.Unmarshal(data, m); err != nil {
			return status.Errorf(codes.InvalidArgument, "bad raft message: %v", err)
		}
		if err := n.Step(ctx, m); err != nil {
			return status.Errorf(codes.Unavailable, "step: %v", err)
		}
	}
	return nil
}

// admit checks that a sender belongs to this member's cluster and
// configuration. A member with no configuration yet (joining) admits any
// member of its cluster, and learns its address.
func (t *Transport) admit(cluster string, from uint64, addr string) error {
	if cluster != t.cfg.ClusterID {
		return status.Errorf(codes.FailedPrecondition,
			"cluster id mismatch: member %d belongs to cluster %q, the sender (member %d) to %q", t.cfg.ID, t.cfg.ClusterID, from, cluster)
	}
	members := t.cfg.Members()
	if len(members) > 0 && members[from] == "" {
		return status.Errorf(codes.FailedPrecondition,
			"member %d is not in the configuration of cluster %q (it was removed, or never added: strata admin member add)", from, cluster)
	}
	if len(members) == 0 && addr != "" {
		t.mu.Lock()
		t.learned[from] = addr
		t.mu.Unlock()
	}
	return nil
}

// CheckJoin asks the members at addrs whether they would accept this
// member; it fails when a majority of those that answer refuse it.
func (t *Transport) CheckJoin(ctx context.Context, addrs []string) error {
	var refused []string
	answered := 0
	for _, addr := range addrs {
		conn, err := grpc.NewClient(addr, t.cfg.dial())
		if err != nil {
			return fmt.Errorf("--join %s: %w", addr, err)
		}
		_, err = spb.NewRaftServiceClient(conn).Step(ctx, &spb.StepRequest{ClusterId: t.cfg.ClusterID,
			From: t.cfg.ID, FromAddress: t.cfg.Address})
		conn.Close()
		switch status.Code(err) {
		case codes.OK:
			answered++
		case codes.FailedPrecondition:
			answered++
			refused = append(refused, addr+": "+status.Convert(err).Message())
		}
	}
	if answered > 0 && len(refused) > answered/2 {
		return fmt.Errorf("member %d cannot join: %s", t.cfg.ID, strings.Join(refused, "; "))
	}
	if answered == 0 {
		return fmt.Errorf("member %d cannot join: none of %s answered", t.cfg.ID, strings.Join(addrs, ", "))
	}
	return nil
}
