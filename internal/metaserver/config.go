package metaserver

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
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
	Namespace statemachine.Config
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
	// Observe, if set, hears what the member does (its metrics:
	// internal/metrics). Calls, if set, is the outermost interceptor of
	// every unary call, over gRPC and callwire alike, and CallStreams of
	// every stream (the calls' metrics and the slow-call log).
	Observe     Observer
	Calls       grpc.UnaryServerInterceptor
	CallStreams grpc.StreamServerInterceptor
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
	if c.Observe == nil {
		c.Observe = noObserver{}
	}
	if c.Store.BlockCacheBytes == 0 && c.Store.HotBytes == 0 {
		c.Store = pebblekv.DefaultOptions()
	}
}

// DefaultClusterID is the cluster id of a group started without one.
const DefaultClusterID = "strata"

// Version is the build's version, set by the linker.
var Version = "dev"
