package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/metrics"
	"github.com/stratafs/strata/internal/privdir"
	"github.com/stratafs/strata/internal/statemachine"
)

// metaFlags are the settings of a namespace service member.
type metaFlags struct {
	listen      string
	advertise   string
	memberID    uint64
	clusterID   string
	initial     string
	join        string
	restoreFrom string
	raftTick    time.Duration
	dataDir     string
	superuser   string
	supergroup  string
	inlineLimit int
	blockSize   string
	blockCache  int64
	hotCache    int64
	memoryLimit int64
	leaseSoft   time.Duration
	leaseHard   time.Duration
	tokenLife   time.Duration
	pprofListen string
	obs         obsFlags
	tls         tlsFlags
	conns       connFlags
	noAuth      bool
	// sharedDataDir lets the member start on a data directory that other
	// users may enter (checkDataDir).
	sharedDataDir bool
	// The trash of fs -rm, and of deleted namespaces.
	trashInterval, namespaceTrash time.Duration
}

func (f *metaFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7700", "address to serve gRPC on")
	fl.StringVar(&f.advertise, "advertise", "", "address clients and the other members reach this member at (default: the --listen address)")
	fl.StringVar(&f.dataDir, "data-dir", "./strata-data", "directory for the namespace state and the Raft log")
	fl.Uint64Var(&f.memberID, "member-id", 1, "this member's id in the Raft group (1, 2, 3, ...)")
	fl.StringVar(&f.clusterID, "cluster-id", metaserver.DefaultClusterID, "name of the Raft group; members of other groups are refused")
	fl.StringVar(&f.initial, "initial-cluster", "", "members of a new group, ID=HOST:PORT,... (default: this member alone); ignored once --data-dir holds a group")
	fl.StringVar(&f.restoreFrom, "restore-from", "", "start a new group (--initial-cluster) from a backup's state (strata meta backup); ignored once --data-dir holds a state")
	fl.StringVar(&f.join, "join", "", "start empty and join the group whose members are at HOST:PORT,... (add this member first: strata admin member add)")
	fl.DurationVar(&f.raftTick, "raft-tick", defaultRaftTick, "Raft tick: heartbeats every tick, elections after 10 to 20 ticks without a leader (docs/ha.md), volatile hflush entries synced at every tick")
	fl.StringVar(&f.superuser, "superuser", currentUser(), "user with superuser rights (like the HDFS NameNode's user)")
	fl.StringVar(&f.supergroup, "supergroup", "supergroup", "group whose members are superusers")
	fl.IntVar(&f.inlineLimit, "inline-limit", 4096, "largest file, in bytes, stored inside its inode")
	fl.StringVar(&f.blockSize, "block-size", "", "block size of files whose writer sets none (default 64MiB; see docs/benchmarks.md)")
	fl.Int64Var(&f.blockCache, "block-cache", defaultCache(), "pebble block cache, bytes, outside the Go heap (default: a sixteenth of the machine's memory, at most 256 MiB; docs/operations.md)")
	fl.Int64Var(&f.hotCache, "hot-cache", defaultCache(), "cache of hot metadata records, bytes, in the Go heap (default: a sixteenth of the machine's memory, at most 256 MiB)")
	fl.Int64Var(&f.memoryLimit, "memory-limit", defaultMemoryLimit(), "the Go heap's soft limit, bytes, the hot cache included; $GOMEMLIMIT wins (default: a quarter of the machine's memory, at most 4 GiB)")
	fl.DurationVar(&f.leaseSoft, "lease-soft-limit", 60*time.Second, "time after which another writer may take over a file whose writer stopped renewing")
	fl.DurationVar(&f.leaseHard, "lease-hard-limit", 20*time.Minute, "time after which the service closes a file whose writer stopped renewing (a copy's temporary <dst>._COPYING_ file is removed instead)")
	fl.DurationVar(&f.trashInterval, "trash-interval", 24*time.Hour, "how long fs -rm keeps what it deletes in the user's trash, /user/USER/.Trash, before the service removes it (HDFS's fs.trash.interval); 0 turns the trash off")
	fl.DurationVar(&f.namespaceTrash, "namespace-trash", time.Duration(statemachine.DefaultNamespaceTrash)*time.Millisecond, "how long a deleted namespace that held anything stays in the trash, restorable with 'strata admin ns restore', before it and its bucket's objects are removed; 0 removes it at once")
	fl.DurationVar(&f.tokenLife, "block-token-lifetime", blocktoken.DefaultPeriod, "how long a block access token lets a client read or write a file's blocks at the workers (at most 1h; the clients renew theirs in the minute before it expires)")
	f.tls.register(cmd, true)
	f.conns.register(cmd)
	fl.BoolVar(&f.noAuth, "insecure-no-auth", false, "turn authentication off: believe whatever user a request names, "+
		"as HDFS's \"simple\" authentication (anyone who reaches the service can act as the superuser; docs/security.md)")
	fl.BoolVar(&f.sharedDataDir, "allow-shared-data-dir", false, "start even if --data-dir gives its group or others "+
		"any permission: by default the service refuses to, as the directory holds the cluster's signing keys "+
		"(its state, log, snapshots and token stay 0700/0600 either way; docs/security.md)")
	fl.StringVar(&f.pprofListen, "pprof-listen", "", "serve Go's profiles (/debug/pprof/, as net/http/pprof) on this address, e.g. 127.0.0.1:6060; off by default")
	f.obs.register(cmd)
}

// servePprof serves the profiling endpoints on f.pprofListen, if set; the
// process's life bounds theirs.
func (f *metaFlags) servePprof() error {
	if f.pprofListen == "" {
		return nil
	}
	lis, err := net.Listen("tcp", f.pprofListen)
	if err != nil {
		return fmt.Errorf("--pprof-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	go func() { _ = http.Serve(lis, mux) }()
	return nil
}

func (f *metaFlags) config() (metaserver.Config, error) {
	ns := statemachine.DefaultConfig(f.superuser)
	ns.Supergroup, ns.InlineLimit = f.supergroup, f.inlineLimit
	if f.trashInterval < 0 || f.namespaceTrash < 0 {
		return metaserver.Config{}, errors.New("--trash-interval and --namespace-trash cannot be negative")
	}
	ns.NamespaceTrash = f.namespaceTrash.Milliseconds()
	if f.blockSize != "" {
		bs, err := parseBytes(f.blockSize)
		if err != nil || bs <= 0 {
			return metaserver.Config{}, fmt.Errorf("--block-size %q: not a size", f.blockSize)
		}
		if err := blocks.CheckSize(uint64(bs)); err != nil {
			return metaserver.Config{}, fmt.Errorf("--block-size: %w", err)
		}
		ns.BlockSize = uint64(bs)
	}
	if f.tokenLife <= 0 || f.tokenLife > blocktoken.DefaultPeriod {
		return metaserver.Config{}, fmt.Errorf("--block-token-lifetime %v: want more than 0 and at most %v (the signing keys' period)", f.tokenLife, blocktoken.DefaultPeriod)
	}
	cfg := metaserver.Config{DataDir: f.dataDir, Namespace: ns, LeaseSoftLimit: f.leaseSoft, LeaseHardLimit: f.leaseHard,
		MemberID: f.memberID, ClusterID: f.clusterID, Address: f.advertise, Tick: f.raftTick, TrashInterval: f.trashInterval,
		NoAuth: f.noAuth, BlockTokenLifetime: f.tokenLife}
	if !f.noAuth {
		cfg.AdminTokenFile = filepath.Join(f.dataDir, "token")
	}
	cfg.Store.BlockCacheBytes, cfg.Store.HotBytes = f.blockCache, f.hotCache
	var err error
	if cfg.Conns, err = f.conns.config(); err != nil {
		return cfg, err
	}
	if f.memberID == 0 {
		return cfg, errors.New("--member-id must be at least 1")
	}
	if f.initial != "" && f.join != "" {
		return cfg, errors.New("--initial-cluster starts a new group and --join enters an existing one: give one of them")
	}
	if f.initial != "" {
		var err error
		if cfg.InitialMembers, err = parseMembers(f.initial); err != nil {
			return cfg, fmt.Errorf("--initial-cluster: %w", err)
		}
		addr, ok := cfg.InitialMembers[f.memberID]
		if !ok {
			return cfg, fmt.Errorf("--initial-cluster does not list this member (--member-id %d)", f.memberID)
		}
		if cfg.Address == "" {
			cfg.Address = addr
		}
	}
	if f.join != "" {
		cfg.Join, cfg.JoinAddresses = true, splitList(f.join)
	}
	return cfg, nil
}

// parseMembers parses ID=HOST:PORT,...
func parseMembers(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	for _, item := range splitList(s) {
		idText, addr, ok := strings.Cut(item, "=")
		id, err := strconv.ParseUint(idText, 10, 64)
		if !ok || err != nil || id == 0 || addr == "" {
			return nil, fmt.Errorf("%q is not ID=HOST:PORT with an id above 0", item)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("member %d is listed twice", id)
		}
		out[id] = addr
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// defaultRaftTick makes an election timeout of 150 to 300 ms, so that a
// dead leader is replaced in about 250 ms (strata bench failover: median
// 829 ms at 50 ms ticks, 249 ms at 15 ms, docs/ha.md). A leader must not
// fall silent for 150 ms: pre-vote and check-quorum keep a member that
// cannot win from disrupting the group, but a leader's loop stalled that
// long (a starved CPU) is replaced. Volatile hflush entries are synced at
// every tick: on disk within 30 ms, at up to 67 syncs a second while only
// hflushes come.
const defaultRaftTick = 15 * time.Millisecond

func metaCmd() *cobra.Command {
	var f metaFlags
	cmd := &cobra.Command{
		Use:   "meta",
		Short: "Run a namespace service member",
		Long: `Run a member of the namespace service: the Raft-replicated store of every
namespace's directories, files, attributes and leases, served over gRPC.
Its state lives in --data-dir; every acknowledged operation is durable.

Alone, a member is a group of one. A group of three tolerates the loss of
one member; start each with the same --initial-cluster and --cluster-id:

  strata meta --member-id 1 --listen 10.0.0.1:7700 --data-dir /data/meta \
      --initial-cluster 1=10.0.0.1:7700,2=10.0.0.2:7700,3=10.0.0.3:7700
  (and members 2 and 3 likewise on their hosts)

Clients take every member: --meta 10.0.0.1:7700,10.0.0.2:7700,10.0.0.3:7700.
To add a member later, "strata admin member add ID HOST:PORT" on the group,
then start it empty with --join and the existing members' addresses.

Create namespaces with "strata admin ns create NAME --store URI".

Every call must carry a token the service signed (docs/security.md). The
leader writes one of the --superuser to DATA-DIR/token (readable by its
owner only) when it takes over and the file holds none it accepts: the
first administrator's credentials. Issue others with
"strata admin token create --user NAME". --insecure-no-auth turns this off.

--data-dir holds the cluster's signing keys: the service refuses a
directory that other users may enter (chmod 700 it, or give
--allow-shared-data-dir), creates one 0700, and keeps its state, log,
snapshots and token in it 0700/0600.

The port holds at most --max-conns connections, --max-conns-per-addr from
one IP address, and closes a connection that made no authenticated call
within --first-call-timeout of connecting (docs/security.md, "Connections").

Prometheus metrics (/metrics, open) and the status page (/status, for a
superuser's token) are served on --http-listen, by default the --listen
port + 2; slow calls are logged with their trace ids (--slow-call), as text
or JSON (--log-format). See docs/operations.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if err := f.checkDataDir(); err != nil {
				return err
			}
			if err := f.restore(cfg); err != nil {
				return err
			}
			if cfg.TLS, cfg.PeerTLS, err = f.tls.servers(""); err != nil {
				return err
			}
			if err := f.servePprof(); err != nil {
				return err
			}
			o, err := f.obs.open()
			if err != nil {
				return err
			}
			tuneGC(f.memoryLimit)
			return serveMeta(cmd.Context(), o, cfg, f.listen, nil)
		},
	}
	f.register(cmd)
	cmd.AddCommand(metaBackupCmd())
	return cmd
}

// serveMeta runs a member until SIGINT or SIGTERM. ensure, if set, runs at
// once and must wait until the member is ready (the dev server creates its
// namespace and starts its worker there).
func serveMeta(ctx context.Context, o *observability, cfg metaserver.Config, listen string, ensure func(context.Context, *metaserver.Serving) error) error {
	log := o.log
	o.memberConfig(&cfg)
	start := time.Now()
	// The address first: a start that cannot serve creates nothing.
	lis, err := listenOn(listen)
	if err != nil {
		return err
	}
	srv, err := openMember(cfg, lis)
	if err != nil {
		return err
	}
	defer srv.Close()
	metrics.NewMemberReport(o.metrics.Registry, srv.Report)
	metrics.NewConns(o.metrics.Registry, "meta", srv.Conns.Stats)
	web, err := o.serveHTTP(srv.Addr, srv.Member, cfg.TLS, cfg.PeerTLS)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ready := func() {
		log.Info("namespace service ready", "listen", srv.Addr, "member", cfg.MemberID,
			"data-dir", cfg.DataDir, "startup", time.Since(start).Round(time.Millisecond))
	}
	if ensure != nil {
		if err := ensure(ctx, srv); err != nil {
			return err
		}
		ready()
	} else {
		// A member of a larger group waits for the others in the
		// background: clients retry until a leader is elected.
		go func() {
			if srv.WaitReady(ctx) == nil {
				ready()
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "strata: serving on %s\n", srv.Addr)
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		return nil
	case <-srv.Done():
		return fmt.Errorf("namespace service stopped: %w", srv.Err())
	}
}

// listenOn listens on addr, the --listen flag, with an error that names
// the flag and says why in a few words ("address already in use").
func listenOn(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return lis, nil
}

// checkDataDir refuses a data directory that other users may enter,
// unless --allow-shared-data-dir, as ssh refuses a private key that others
// may read: it holds the cluster's signing keys (docs/security.md, "At
// rest"). One that does not exist passes: the service makes it 0700.
// NB: with the flag, the directory stays as it is (a mount point's mode is
// the operator's); what the service writes in it is closed all the same.
func (f *metaFlags) checkDataDir() error {
	err := privdir.Check(f.dataDir)
	switch {
	case err == nil || errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, privdir.ErrShared) && f.sharedDataDir:
		fmt.Fprintf(os.Stderr, "strata: --data-dir %v: started anyway (--allow-shared-data-dir)\n", err)
		return nil
	case errors.Is(err, privdir.ErrShared):
		return fmt.Errorf("--data-dir %v, and it holds the cluster's signing keys: close it (chmod 700 %s), "+
			"or start with --allow-shared-data-dir to leave it so (its state, log, snapshots and token stay "+
			"0700/0600 either way; docs/security.md)", err, f.dataDir)
	}
	return fmt.Errorf("--data-dir: %w", err)
}

// openMember opens a member on cfg.DataDir and serves it on lis. A data
// directory this start created (0700) is removed again if the member
// cannot be opened: it holds nothing but what the failed start wrote.
func openMember(cfg metaserver.Config, lis net.Listener) (*metaserver.Serving, error) {
	_, statErr := os.Stat(cfg.DataDir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(cfg.DataDir, privdir.DirMode); err != nil {
		lis.Close()
		return nil, err
	}
	srv, err := metaserver.Serve(cfg, lis)
	if err != nil && created {
		_ = os.RemoveAll(cfg.DataDir)
	}
	return srv, err
}
