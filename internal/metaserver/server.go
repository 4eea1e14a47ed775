// Package metaserver is the namespace service: it puts the namespace state
// machine, its pebble store and the Raft node together behind the gRPC
// MetaService. Mutations become commands in the Raft log and are answered
// once applied; reads are served from the applied state. It does not store
// file data.
package metaserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/cachemode"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Config configures a namespace service member.
type Config struct {
	DataDir  string // holds state/ (the namespace), raft/ (the log) and snapshots/
	MemberID uint64 // 1 for a single member
	// Address is where this member serves (MetaService and RaftService).
	Address string
	// ClusterID names the Raft group; members refuse traffic of others.
	ClusterID string
	// InitialMembers are the members of a new group, by id (nil: this
	// member alone, at Address). Ignored once the data directory holds a
	// group.
	InitialMembers map[uint64]string
	// Join starts an empty member that an existing group added (strata
	// admin member add); JoinAddresses are some of that group's members.
	Join          bool
	JoinAddresses []string
	// Tick is the Raft tick (elections after 10 to 20 ticks).
	Tick      time.Duration
	Namespace namespace.Config
	Store     pebblekv.Options
	// LeaseSoftLimit is how long a writer may go without renewing before
	// another client may take its file over; LeaseHardLimit is when the
	// service recovers the file on its own. HDFS uses 60 s and 20 min.
	LeaseSoftLimit, LeaseHardLimit time.Duration
	// TrashInterval is how long `fs -rm` keeps what it deletes in the
	// user's trash before the leader removes it (HDFS's fs.trash.interval);
	// 0 turns the trash off. How long a deleted namespace stays in the
	// trash is Namespace.NamespaceTrash.
	TrashInterval time.Duration
	// PurgeBatch bounds the inodes one purge command removes.
	PurgeBatch int
	Clock      func() time.Time // nil means time.Now
	// OpenStore opens a bucket for the block collector; nil means
	// objstore.OpenRetrying.
	OpenStore func(ctx context.Context, uri string) (object.Store, error)
	Log       *slog.Logger
	// BlockTokenLifetime is how long a block access token is valid (at
	// most BlockKeyPeriod, its default); BlockKeyPeriod how often the keys
	// that sign them rotate (default blocktoken.DefaultPeriod).
	BlockTokenLifetime, BlockKeyPeriod time.Duration
	// TLS, if set, is what the member serves with (Serve); PeerTLS what it
	// connects to the other members with, its certificate included
	// (tlsconf). Both nil: plaintext.
	TLS, PeerTLS *tls.Config
	// NoAuth turns authentication off: the service believes whatever user
	// a request's header names (--insecure-no-auth; docs/security.md).
	NoAuth bool
	// Conns bounds the connections Serve holds open (internal/connlimit;
	// the zero value: its defaults).
	Conns connlimit.Config
	// AdminTokenFile is where the leader writes a token of the superuser
	// when the file holds none it accepts (AdminToken); empty: nowhere.
	AdminTokenFile string
	// WrapSender, if set, wraps the Raft transport: tests cut links
	// between members there (raftnode.Cut).
	WrapSender func(raftnode.Sender) raftnode.Sender
}

func (c *Config) setDefaults() {
	if c.MemberID == 0 {
		c.MemberID = 1
	}
	if c.ClusterID == "" {
		c.ClusterID = DefaultClusterID
	}
	if c.InitialMembers == nil {
		c.InitialMembers = map[uint64]string{c.MemberID: c.Address}
	}
	if c.LeaseSoftLimit == 0 {
		c.LeaseSoftLimit = 60 * time.Second
	}
	if c.LeaseHardLimit == 0 {
		c.LeaseHardLimit = 20 * time.Minute
	}
	if c.PurgeBatch == 0 {
		c.PurgeBatch = 1000
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Store.BlockCacheBytes == 0 && c.Store.HotBytes == 0 {
		c.Store = pebblekv.DefaultOptions()
	}
}

// Server is one member of the namespace service.
type Server struct {
	pb.UnimplementedMetaServiceServer

	cfg       Config
	machine   *statemachine.Machine
	store     *pebblekv.Store
	node      *raftnode.Node
	transport *raftnode.Transport
	members   atomic.Pointer[map[uint64]kvschema.Member] // as applied
	addrs     atomic.Pointer[map[uint64]string]          // members' addresses, derived from members
	leases    *leaseMonitor
	workers   workerRegistry
	auth      authenticator
	purgeCh   chan struct{}
	authCh    chan struct{} // kicks leaderAuth
	gcCh      chan struct{}
	stores    objstore.Set
	cache     *cachemode.Mode
	// cacheNS holds the records of the cache-mode namespaces, read from
	// the state when first needed and dropped when commands create or
	// delete namespaces; nsMu serialises the two.
	cacheNS atomic.Pointer[map[string]*kvschema.Namespace]
	nsMu    sync.Mutex
	stop    chan struct{}
	wg      sync.WaitGroup

	blockKeys blockKeyring

	nextProposal atomic.Uint64
	applied      atomic.Uint64
	props        proposals
}

// Open starts a member on cfg.DataDir, replaying whatever of the log the
// state had not applied.
func Open(cfg Config) (*Server, error) {
	cfg.setDefaults()
	cfg.Store.Uncached = kvschema.IsRequestKey
	store, err := pebblekv.Open(filepath.Join(cfg.DataDir, "state"), cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("metaserver: open state: %w", err)
	}
	s := &Server{cfg: cfg, machine: statemachine.New(cfg.Namespace), store: store,
		purgeCh: make(chan struct{}, 1), gcCh: make(chan struct{}, 1), authCh: make(chan struct{}, 1),
		stop: make(chan struct{})}
	s.props.waiting = map[uint64][]*proposal{}
	// Proposal ids only route answers back to waiters; a restart must not
	// reuse the ids of entries an earlier run left in the log.
	s.nextProposal.Store(cfg.MemberID<<48 | uint64(time.Now().UnixNano())&(1<<47-1))
	s.stores.Open = cfg.OpenStore
	s.cache = cachemode.New(cacheService{s}, s.machine.FS(), cfg.Log)
	// The monitor exists before the node, whose leadership changes reset it.
	if s.leases, err = newLeaseMonitor(s); err != nil {
		store.Close()
		return nil, err
	}
	if err := s.start(); err != nil {
		store.Close()
		return nil, err
	}
	// Work that the leader does on its own, in bounded commands.
	s.every(time.Second, nil, "lease check", s.checkLeasesAsLeader)
	s.kickPurge() // a purge a restart interrupted goes on at once
	s.every(10*time.Second, s.purgeCh, "purge", s.PurgeAll)
	s.every(10*time.Second, s.gcCh, "block garbage collection", s.CollectGarbage)
	s.every(time.Minute, nil, "forget requests", s.ForgetRequests)
	s.every(time.Hour, nil, "upload sweep", s.SweepUploads)
	s.every(time.Second, nil, "namespace trash", s.PurgeExpiredNamespaces)
	s.every(time.Minute, s.authCh, "tokens", s.leaderAuth)
	if cfg.TrashInterval > 0 {
		s.every(cfg.trashPeriod(), nil, "trash emptier", s.EmptyTrash)
	}
	return s, nil
}

// every runs work in the background every period, and at once whenever
// kick receives (a nil kick never does), until the server stops; a failed
// run is logged, and the next one tries again.
func (s *Server) every(period time.Duration, kick <-chan struct{}, what string, work func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-kick:
			case <-t.C:
			}
			if err := work(context.Background()); err != nil {
				s.cfg.Log.Warn(what, "err", err)
			}
		}
	}()
}

// DefaultClusterID is the cluster id of a group started without one.
const DefaultClusterID = "strata"

// start loads the membership (recording the initial one in a new state)
// and starts the Raft node with its transport.
func (s *Server) start() error {
	cfg := s.cfg
	applied, err := statemachine.AppliedIndex(s.store.Writer())
	if err != nil {
		return err
	}
	s.applied.Store(applied)
	if err := s.loadMembers(); err != nil {
		return err
	}
	var peers []uint64
	if len(*s.members.Load()) == 0 && !cfg.Join {
		if err := s.bootstrapMembers(); err != nil {
			return err
		}
		for id := range cfg.InitialMembers {
			peers = append(peers, id)
		}
	}
	s.transport, err = raftnode.NewTransport(raftnode.TransportConfig{ClusterID: cfg.ClusterID, ID: cfg.MemberID,
		Address: cfg.Address, Members: s.memberAddresses, Checkpoint: s.store.Checkpoint,
		SnapshotDir: filepath.Join(cfg.DataDir, "snapshots"), Dial: tlsconf.Dial(cfg.PeerTLS), Log: cfg.Log})
	if err != nil {
		return err
	}
	if cfg.Join && len(*s.members.Load()) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.transport.CheckJoin(ctx, cfg.JoinAddresses)
		cancel()
		if err != nil {
			return err
		}
	}
	s.node, err = raftnode.Start(raftnode.Config{ID: cfg.MemberID, ClusterID: cfg.ClusterID, Peers: peers, Join: cfg.Join,
		Dir: filepath.Join(cfg.DataDir, "raft"), Applied: applied, Tick: cfg.Tick, CompactKeep: 5000,
		Transport: s.sender(), OnLeader: s.leaderChanged, Log: cfg.Log}, s)
	if err != nil {
		s.transport.Close()
		return err
	}
	s.transport.Attach(s.node)
	return nil
}

// sender is what the node sends through: the transport, wrapped if the
// configuration says so.
func (s *Server) sender() raftnode.Sender {
	if s.cfg.WrapSender != nil {
		return s.cfg.WrapSender(s.transport)
	}
	return s.transport
}

// Transport serves RaftService for the other members.
func (s *Server) Transport() *raftnode.Transport { return s.transport }

// Version is the build's version, set by the linker.
var Version = "dev"

// Close stops the member. Acknowledged operations are durable already.
func (s *Server) Close() error {
	close(s.stop)
	s.wg.Wait()
	s.node.Stop()
	s.transport.Close()
	s.failWaiters(raftnode.ErrStopped)
	return s.store.Close()
}

// Done is closed when the member stops serving, on Close or on a fatal
// error (Err says which).
func (s *Server) Done() <-chan struct{} { return s.node.Done() }

// Err returns the fatal error that stopped the member, if any.
func (s *Server) Err() error { return s.node.Err() }

// WaitReady blocks until the member can serve: it has a leader and has
// applied what was committed before it started.
func (s *Server) WaitReady(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		// The leader as this member's loop published it (what requests
		// check), not only as raft knows it.
		lead, leader := s.node.Leader()
		if lead != 0 && (lead != s.cfg.MemberID || leader) && s.applied.Load() >= s.node.Status().GetCommit() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metaserver: not ready: %w", ctx.Err())
		case <-s.node.Done():
			return errors.Join(raftnode.ErrStopped, s.node.Err())
		case <-t.C:
		}
	}
}
