package worker

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/tlsconf"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// HeartbeatInterval is how often the worker heartbeats to each member of
// the namespace service (which counts a worker live until 5 s pass
// without one).
const HeartbeatInterval = time.Second

// heartbeatTimeout bounds one heartbeat. A member that does not answer
// within it holds up only its own heartbeats: each member has a loop of
// its own.
const heartbeatTimeout = 3 * time.Second

// memberConnectParams bound gRPC's backoff between connection attempts to
// a member: its default grows to two minutes, and a member restarted after
// a while would hear from the worker only that late, and not know it if it
// were elected meanwhile.
var memberConnectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: time.Second,
}

// heartbeats sends the worker's heartbeats to every member of the
// namespace service's Raft group, each from a loop of its own, every
// HeartbeatInterval. Every member records the worker, so that a member
// elected leader knows the live workers at once (no heartbeat has to find
// it first); followers answer NOT_LEADER, naming the leader, and a leader
// not among the addresses the worker was given (a member added since) is
// heartbeated to as well from then on. Only the leader's answers carry
// deleted blocks to drop from the cache.
//
// A member's failures are logged when they start and when they end, not
// every second.
type heartbeats struct {
	w         *Worker
	advertise string
	wg        sync.WaitGroup
	mu        struct {
		sync.Mutex
		failing map[string]string // by member address: why its last heartbeat failed, "" when it answered
		leader  string            // the member that last accepted a heartbeat
	}
}

// startHeartbeats starts a heartbeat loop for each of members; they run
// until ctx ends (wait for them with wait).
func (w *Worker) startHeartbeats(ctx context.Context, members []string, advertise string) *heartbeats {
	h := &heartbeats{w: w, advertise: advertise}
	h.mu.failing = map[string]string{}
	for _, addr := range members {
		h.start(ctx, addr)
	}
	return h
}

// start starts the loop of the member at addr unless it has one.
func (h *heartbeats) start(ctx context.Context, addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.mu.failing[addr]; ok || ctx.Err() != nil {
		return
	}
	h.mu.failing[addr] = ""
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.run(ctx, addr)
	}()
}

// wait waits for the loops to end.
func (h *heartbeats) wait() { h.wg.Wait() }

func (h *heartbeats) run(ctx context.Context, addr string) {
	opts := []grpc.DialOption{tlsconf.Dial(h.w.cfg.MetaTLS), grpc.WithConnectParams(memberConnectParams)}
	if h.w.cfg.Token != "" { // heartbeats need a superuser's token (docs/security.md)
		opts = append(opts, grpc.WithPerRPCCredentials(token.Credentials(h.w.cfg.Token)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		h.w.cfg.Log.Error("cannot heartbeat to the namespace service", "member", addr, "err", err)
		return
	}
	defer conn.Close()
	meta := pb.NewMetaServiceClient(conn)
	t := time.NewTicker(HeartbeatInterval)
	defer t.Stop()
	for {
		start := time.Now()
		hctx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
		resp, err := meta.Heartbeat(hctx, &pb.HeartbeatRequest{Worker: h.w.info(h.advertise)})
		cancel()
		if ctx.Err() != nil {
			return
		}
		h.answered(ctx, addr, meta, start, resp, rpcerr.FromStatus(err))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// answered takes the member at addr's answer to a heartbeat sent at start
// through meta.
func (h *heartbeats) answered(ctx context.Context, addr string, meta pb.MetaServiceClient, start time.Time,
	resp *pb.HeartbeatResponse, err error) {
	log := h.w.cfg.Log
	if errors.Is(err, fserr.ErrNotLeader) {
		if l := fserr.LeaderOf(err); l != "" {
			h.start(ctx, l)
		}
		err = nil // a follower answered: as it should
	}
	h.mu.Lock()
	was := h.mu.failing[addr]
	if err != nil {
		h.mu.failing[addr] = err.Error()
	} else {
		h.mu.failing[addr] = ""
	}
	lost := h.mu.leader == addr && resp == nil
	found := resp != nil && h.mu.leader != addr
	switch {
	case found:
		h.mu.leader = addr
	case lost:
		h.mu.leader = ""
	}
	h.mu.Unlock()
	switch {
	case err != nil && was == "":
		log.Warn("heartbeat to a member of the namespace service failed", "member", addr, "err", err)
	case err == nil && was != "":
		log.Info("a member of the namespace service answers heartbeats again", "member", addr)
	}
	switch {
	case found:
		log.Info("the namespace service's leader takes this worker's heartbeats", "leader", addr)
	case lost:
		log.Info("the namespace service's leader no longer takes this worker's heartbeats", "member", addr)
	}
	if resp != nil {
		// The leader's answer: the worker asks it for keys it has not
		// heard of (heartbeatSince) from now on.
		h.w.meta.Store(&meta)
		h.w.trust.answered(resp, start)
		h.w.dropBlocks(resp.GetDropped())
	}
}

// info is what the worker's heartbeats say of it.
func (w *Worker) info(advertise string) *pb.WorkerInfo {
	return &pb.WorkerInfo{Id: w.id, Address: advertise, Host: w.host, UnixSocket: w.cfg.UnixSocket, Stats: w.statsProto(),
		ScKey: w.scKey.Public().(ed25519.PublicKey)}
}
