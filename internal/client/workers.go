package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// workerListTTL is how long the client trusts its list of live workers.
const workerListTTL = 3 * time.Second

// workerSet tracks the live workers and the connections to them.
type workerSet struct {
	c  *Client
	mu struct {
		sync.Mutex
		list    []*pb.WorkerInfo
		fetched time.Time
		conns   map[string]*grpc.ClientConn
		sc      map[string]*scPool
		sockets map[string]scFound // by worker id: what local found at its socket
		told    map[string]bool    // why not short-circuit, logged once (whyNot)
	}
}

func (ws *workerSet) init(c *Client) {
	ws.c = c
}

// workerWait bounds how long a worker lookup waits for a live worker while
// the service knows of none. Workers heartbeat to every member every second
// (docs/ha.md, "Workers"), so a new leader knows them at once, and one
// elected moments after it started (or a worker started moments ago) within
// a heartbeat interval. Past it, no live workers is an unavailable-class
// error: the caller may try again later.
const workerWait = 3 * time.Second

// live returns the live workers, refreshing the list when it is old or
// when refresh is set (after a worker failed). An empty list is asked for
// again, with backoff, for up to workerWait.
func (ws *workerSet) live(ctx context.Context, refresh bool) ([]*pb.WorkerInfo, error) {
	ws.mu.Lock()
	fresh := time.Since(ws.mu.fetched) < workerListTTL && len(ws.mu.list) > 0
	list := ws.mu.list
	ws.mu.Unlock()
	if fresh && !refresh {
		return list, nil
	}
	deadline := time.Now().Add(workerWait)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		r, err := call(func() (*pb.ListWorkersResponse, error) {
			return ws.c.meta.ListWorkers(ctx, &pb.ListWorkersRequest{})
		})
		if err != nil {
			return nil, err
		}
		if len(r.Workers) > 0 {
			ws.mu.Lock()
			ws.mu.list, ws.mu.fetched = r.Workers, time.Now()
			ws.mu.Unlock()
			return r.Workers, nil
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fserr.Errorf(fserr.ErrUnavailable, "no live workers (the namespace service's leader has heard from none; waited %v): start one with 'strata worker' (or use 'strata server --dev')", workerWait)
		}
		if err := sleep(ctx, backoff); err != nil {
			return nil, err
		}
	}
}

// rank orders workers by preference for block of inode: its home first.
// The caller must not change the slice it returns (list itself when there
// is nothing to order: rank runs on every read).
func rank(list []*pb.WorkerInfo, inode, block uint64) []*pb.WorkerInfo {
	if len(list) < 2 {
		return list
	}
	ids := make([]string, len(list))
	for i, w := range list {
		ids[i] = w.Id
	}
	out := make([]*pb.WorkerInfo, 0, len(list))
	for _, i := range blocks.Rank(ids, inode, block) {
		out = append(out, list[i])
	}
	return out
}

// writerOrder lists the workers a new file's content may go to: one
// whose socket the client reaches first (its cache then serves reads back), then by rendezvous
// on the inode.
func (ws *workerSet) writerOrder(list []*pb.WorkerInfo, inode uint64) []*pb.WorkerInfo {
	order := rank(list, inode, 0)
	for i, w := range order {
		if ws.local(w) {
			return append([]*pb.WorkerInfo{w}, append(order[:i:i], order[i+1:]...)...)
		}
	}
	return order
}

// fromWorker translates err, the status of a call to the worker at addr;
// a call that got no answer names the worker.
func fromWorker(addr string, err error) error {
	err = rpcerr.FromStatus(err)
	var te *rpcerr.TransportError
	if errors.As(err, &te) {
		return fmt.Errorf("worker at %s: %w", addr, err)
	}
	return err
}

func (ws *workerSet) conn(w *pb.WorkerInfo) (pb.WorkerServiceClient, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if cc, ok := ws.mu.conns[w.Address]; ok {
		return pb.NewWorkerServiceClient(cc), nil
	}
	cc, err := grpc.NewClient(w.Address, tlsconf.Dial(ws.c.cfg.TLS),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		return nil, err
	}
	if ws.mu.conns == nil {
		ws.mu.conns = map[string]*grpc.ClientConn{}
	}
	ws.mu.conns[w.Address] = cc
	return pb.NewWorkerServiceClient(cc), nil
}

func (ws *workerSet) scPool(socket string) *scPool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if p, ok := ws.mu.sc[socket]; ok {
		return p
	}
	if ws.mu.sc == nil {
		ws.mu.sc = map[string]*scPool{}
	}
	p := newSCPool(socket)
	ws.mu.sc[socket] = p
	return p
}

// EndLeases ends the client's short-circuit leases now rather than when
// they expire (2 s after each was granted), unmapping the cache files they
// mapped; later reads ask their workers for new ones. It is for
// benchmarks that drop the cache's files from the OS page cache, which
// keeps the pages a process maps.
func (c *Client) EndLeases() {
	c.workers.mu.Lock()
	defer c.workers.mu.Unlock()
	for _, p := range c.workers.mu.sc {
		p.leases.endAll()
	}
}

func (ws *workerSet) close() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, cc := range ws.mu.conns {
		cc.Close()
	}
	for _, p := range ws.mu.sc {
		p.close()
	}
}

// WorkerReport is what one live worker said when asked for its counters.
type WorkerReport struct {
	Info  *pb.WorkerInfo
	Stats *pb.WorkerStats // nil when Err is set
	Err   error           // why the worker did not answer
}

// workerStatsTimeout bounds the wait for one worker's counters: a worker
// that died is still listed for a few seconds (until the service's
// workerTimeout), and must not hold up the report of the others.
const workerStatsTimeout = 2 * time.Second

// Workers asks every live worker for its counters, all at once, and
// reports each, in the service's order: one that did not answer within
// workerStatsTimeout (it died moments ago) is reported with its error,
// not failing the rest.
func (c *Client) Workers(ctx context.Context) ([]WorkerReport, error) {
	list, err := c.workers.live(ctx, true)
	if err != nil {
		return nil, err
	}
	out := make([]WorkerReport, len(list))
	var wg sync.WaitGroup
	for i, w := range list {
		out[i].Info = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].Stats, out[i].Err = c.workerStats(ctx, w)
		}()
	}
	wg.Wait()
	return out, nil
}

func (c *Client) workerStats(ctx context.Context, w *pb.WorkerInfo) (*pb.WorkerStats, error) {
	wc, err := c.workers.conn(w)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, workerStatsTimeout)
	defer cancel()
	st, err := wc.Stats(ctx, &pb.WorkerStatsRequest{})
	if err != nil {
		return nil, fromWorker(w.Address, err)
	}
	return st, nil
}

// WorkerStats returns the counters of every live worker that answered
// (see Workers).
func (c *Client) WorkerStats(ctx context.Context) ([]*pb.WorkerStats, error) {
	reports, err := c.Workers(ctx)
	if err != nil {
		return nil, err
	}
	var out []*pb.WorkerStats
	for _, r := range reports {
		if r.Err == nil {
			out = append(out, r.Stats)
		}
	}
	return out, nil
}
