// Package client is the Go client of Strata: the library behind the CLI and
// the FUSE mount. It speaks to the namespace service over gRPC and holds no
// metadata semantics of its own; paths are checked, errors are translated
// back into fserr conditions, and leases are renewed while files are open
// for writing.
package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Config says how to reach the service and who the client is.
type Config struct {
	// Meta is the namespace service address, host:port, or the addresses
	// of its members, comma-separated.
	Meta string
	// RetryTimeout bounds how long a call keeps looking for a leader once
	// the client reached the service: a failover (0: DefaultRetryTimeout).
	RetryTimeout time.Duration
	// ConnectTimeout bounds how long the client waits for a first member
	// to accept a connection, after which a call fails naming each address
	// and why it could not be reached (0: DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Namespace is used for bare paths; empty means "default".
	Namespace string
	// Token proves who the client is (docs/security.md): the service takes
	// the caller from it. Empty: the client sends none, and a service with
	// authentication on answers every call UNAUTHENTICATED. The CLI finds
	// one with token.Find.
	Token string
	// User and Groups are the caller a request's header names, which only
	// a service started with --insecure-no-auth believes; with a Token they
	// are its user and groups, else the OS user's.
	User   string
	Groups []string
	// Umask masks the permission of created files and directories; the
	// default is 0o022.
	Umask *uint32
	// NoShortCircuit makes reads go through the workers' RPC even when a
	// worker shares this host.
	NoShortCircuit bool
	// ShortCircuitDir, if set, is where the workers' short-circuit sockets
	// are shared into this client's container (a worker's socket is looked
	// for there by its name); empty: at the path each worker made it. A
	// worker's socket is used only once the worker behind it proved that
	// it is the worker the service lists (scfind.go); host names play no
	// part.
	ShortCircuitDir string
	// Log is where the client says, once per worker, why it cannot read
	// short-circuit from a worker whose socket it found (nil:
	// slog.Default()).
	Log *slog.Logger
	// BatchesInFlight bounds the reads, and batches of coalesced reads, in
	// flight to the service: reads made while that many are in flight
	// leave together, as one batch, when one returns; mutations likewise,
	// in batches of their own. 0 means DefaultBatchesInFlight; a negative
	// value sends every call alone.
	BatchesInFlight int
	// GRPCOnly sends the unary calls to the namespace service over gRPC,
	// as the streams go, instead of callwire (internal/callwire): for
	// comparisons, and services older than callwire.
	GRPCOnly bool
	// TLS, if set, is how the client connects to the service and the
	// workers (tlsconf.Files.Client); nil: plaintext.
	TLS *tls.Config
}

// Client is a connection to a Strata cluster. Safe for concurrent use.
type Client struct {
	cfg     Config
	members *members
	batches coalescing
	meta    pb.MetaServiceClient
	name    string // lease holder name
	header  *pb.Header
	umask   uint32
	workers workerSet
	// inlineLimit is the inline limit the service last stated (0 before
	// any create): WriteFile sends content up to it in one call.
	inlineLimit atomic.Int64

	renewMu struct {
		sync.Mutex
		writers int
		stop    chan struct{}
	}
}

// New connects to the service named in cfg; a malformed address is an
// fserr.ErrInvalidArgument. It does not wait for the service to answer;
// the first call does (or Connect).
func New(cfg Config) (*Client, error) {
	ms, err := newMembers(cfg.Meta, cfg.RetryTimeout, cfg.ConnectTimeout, cfg.TLS)
	if err != nil {
		return nil, err
	}
	ms.grpcOnly = cfg.GRPCOnly
	switch {
	case cfg.Token != "":
		t, err := token.Parse(cfg.Token)
		if err != nil {
			return nil, fserr.Errorf(fserr.ErrInvalidArgument, "client: %v", err)
		}
		cfg.User, cfg.Groups = t.ID.GetUser(), t.ID.GetGroups()
		ms.dialOptions = append(ms.dialOptions, grpc.WithPerRPCCredentials(token.Credentials(cfg.Token)))
		ms.token = cfg.Token
	case cfg.User == "":
		cfg.User, cfg.Groups = osUser()
	}
	if cfg.BatchesInFlight == 0 {
		cfg.BatchesInFlight = DefaultBatchesInFlight
	}
	c := &Client{cfg: cfg, members: ms, batches: newCoalescing(ms, cfg.BatchesInFlight), name: clientName(), umask: 0o022}
	c.meta = pb.NewMetaServiceClient(c.batches)
	if cfg.Umask != nil {
		c.umask = *cfg.Umask & 0o777
	}
	c.header = &pb.Header{Namespace: cfg.Namespace, User: cfg.User, Groups: cfg.Groups, ClientName: c.name}
	c.workers.init(c)
	return c, nil
}

// Close releases the connection. Files still open for writing are left to
// lease recovery.
func (c *Client) Close() error {
	c.renewMu.Lock()
	if c.renewMu.stop != nil {
		close(c.renewMu.stop)
		c.renewMu.stop = nil
	}
	c.renewMu.Unlock()
	c.workers.close()
	return c.members.close()
}

// User returns the user the client acts as.
func (c *Client) User() string { return c.cfg.User }

// BatchesInFlight returns how many reads (or batches of reads) the client
// has in flight before it coalesces reads (negative: it never coalesces).
func (c *Client) BatchesInFlight() int { return c.cfg.BatchesInFlight }

// Name returns the client's lease holder name.
func (c *Client) Name() string { return c.name }

// osUser is the OS user: the caller a client without a token names. NB:
// $STRATA_USER and $HADOOP_USER_NAME no longer choose it; only a token does.
func osUser() (string, []string) {
	u, err := user.Current()
	if err != nil {
		return "nobody", nil
	}
	var groups []string
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := user.LookupGroupId(id); err == nil {
				groups = append(groups, g.Name)
			}
		}
	}
	return u.Username, groups
}

func clientName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	return fmt.Sprintf("strata-go-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Scheme is the URI scheme of Strata paths.
const Scheme = "strata://"

// splitPath turns "strata://ns/p", "strata:///p" or "/p" into a namespace
// and an absolute path, which must follow the path rule (internal/fspath)
// before the call leaves.
func splitPath(p string) (ns, path string, err error) {
	return split(p, fspath.Split)
}

// splitNewPath is splitPath for a path whose missing components the call
// creates: their names must be names a new entry may have.
func splitNewPath(p string) (ns, path string, err error) {
	return split(p, fspath.SplitNew)
}

func split(p string, check func(string) ([]string, error)) (ns, path string, err error) {
	if rest, ok := strings.CutPrefix(p, Scheme); ok {
		ns, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	} else {
		path = p
	}
	if _, err := check(path); err != nil {
		return "", "", fmt.Errorf("%s: %w", p, err)
	}
	return ns, path, nil
}

// nsName names namespace ns as the service will read it: empty means the
// client's, and the client's empty means "default".
func (c *Client) nsName(ns string) string {
	if ns == "" {
		ns = c.header.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	return ns
}

// hdr returns the request header for namespace ns (empty: the client's).
func (c *Client) hdr(ns string) *pb.Header {
	if ns == "" || ns == c.header.Namespace {
		return c.header
	}
	return &pb.Header{Namespace: ns, User: c.header.User, Groups: c.header.Groups, ClientName: c.header.ClientName}
}

// call runs fn and translates the service's error.
func call[T any](fn func() (T, error)) (T, error) {
	v, err := fn()
	return v, rpcerr.FromStatus(err)
}

// renewLeases keeps this client's leases alive while it has writers open.
func (c *Client) startWriter() {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	c.renewMu.writers++
	if c.renewMu.stop == nil {
		c.renewMu.stop = make(chan struct{})
		go c.renewLoop(c.renewMu.stop)
	}
}

func (c *Client) endWriter() {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	c.renewMu.writers--
	if c.renewMu.writers == 0 && c.renewMu.stop != nil {
		close(c.renewMu.stop)
		c.renewMu.stop = nil
	}
}

// renewInterval is well inside the service's 60 s soft limit.
const renewInterval = 20 * time.Second

func (c *Client) renewLoop(stop chan struct{}) {
	t := time.NewTicker(renewInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = c.meta.RenewLease(ctx, &pb.RenewLeaseRequest{Header: c.header})
			cancel()
		}
	}
}
