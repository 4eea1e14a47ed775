package metaserver

import (
	"context"
	"time"

	"github.com/stratafs/strata/internal/cachemode"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver/auth"
	"github.com/stratafs/strata/internal/metaserver/membership"
	"github.com/stratafs/strata/internal/metaserver/upkeep"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
)

// Member is one member of the namespace service: its replica and the parts
// around it. Server serves it over gRPC (Serve).
type Member struct {
	cfg     Config
	core    *replica
	tokens  *auth.Tokens
	blocks  *auth.BlockTokens
	admin   *membership.Admin
	leases  *leases
	workers workerRegistry
	cache   *cacheNamespaces
	stores  objstore.Set
	jobs    *upkeep.Scheduler
	started time.Time
}

// The leader's periodic jobs, by name (RunJob).
const (
	JobLeases         = "lease check"
	JobPurge          = "purge"
	JobGarbage        = "block garbage collection"
	JobForgetRequests = "forget requests"
	JobUploadSweep    = "upload sweep"
	JobNamespaceTrash = "namespace trash"
	JobTokens         = "tokens"
	JobTrash          = "trash emptier"
)

// open makes a member on cfg.DataDir: its state opened, its parts made,
// nothing started (start).
func open(cfg Config) (*Member, error) {
	cfg.setDefaults()
	core, err := newReplica(cfg)
	if err != nil {
		return nil, err
	}
	acfg := auth.Config{ClusterID: cfg.ClusterID, Superuser: cfg.Namespace.Superuser, NoAuth: cfg.NoAuth,
		AdminTokenFile: cfg.AdminTokenFile, BlockTokenLifetime: cfg.BlockTokenLifetime, BlockKeyPeriod: cfg.BlockKeyPeriod}
	m := &Member{cfg: cfg, core: core, tokens: auth.NewTokens(acfg, core), blocks: auth.NewBlockTokens(acfg, core),
		admin: membership.NewAdmin(core, &core.members), jobs: upkeep.NewScheduler(cfg.Log)}
	m.stores.Open = cfg.OpenStore
	m.leases = newLeases(core, &m.stores, cfg)
	m.cache = &cacheNamespaces{core: core, log: cfg.Log, mode: cachemode.New(cacheService{m}, core.machine.FS(), cfg.Log)}
	m.addJobs()
	return m, nil
}

// addJobs registers the work the leader does on its own, in bounded
// commands.
func (m *Member) addJobs() {
	log, core := m.cfg.Log, m.core
	gc := &upkeep.Collector{Replica: core, Buckets: &m.stores, Deleted: m.workers.drop, Log: log}
	emptier := &upkeep.Emptier{Replica: core, Machine: core.machine, Interval: m.cfg.TrashInterval, Log: log}
	for _, j := range []upkeep.Job{
		{Name: JobLeases, Every: time.Second, Run: m.leases.check},
		{Name: JobPurge, Every: 10 * time.Second, Run: upkeep.Purge(core, m.cfg.PurgeBatch)},
		{Name: JobGarbage, Every: 10 * time.Second, Run: gc.Run},
		{Name: JobForgetRequests, Every: time.Minute, Run: upkeep.ForgetRequests(core)},
		{Name: JobUploadSweep, Every: time.Hour, Run: m.cache.sweepUploads},
		{Name: JobNamespaceTrash, Every: time.Second, Run: upkeep.PurgeNamespaces(core, log)},
		{Name: JobTokens, Every: time.Minute, Run: m.tokens.Upkeep},
		{Name: JobTrash, Every: upkeep.TrashPeriod(m.cfg.TrashInterval), Run: emptier.Run},
	} {
		m.jobs.Add(j)
	}
}

// start starts the replica, then the jobs. A purge a restart interrupted
// goes on at once.
func (m *Member) start() error {
	m.started = m.cfg.Clock()
	if err := m.core.start(events{applied: m.applied, leader: m.leaderChanged}); err != nil {
		m.core.close()
		return err
	}
	m.jobs.Kick(JobPurge)
	m.jobs.Start()
	return nil
}

// applied acts on what a batch of entries changed, before their answers.
func (m *Member) applied(out statemachine.Applied) {
	if out.Tokens {
		m.tokens.Changed()
	}
	if out.Namespaces {
		m.cache.changed()
	}
	if out.Purge {
		m.jobs.Kick(JobPurge)
	}
	if out.Collect {
		m.jobs.Kick(JobGarbage)
	}
	if out.Imports {
		go m.core.imports.cleanup()
	}
}

// leaderChanged runs on the Raft loop when this member takes or loses the
// lead.
func (m *Member) leaderChanged(isLeader bool) {
	if !isLeader {
		return
	}
	go m.leases.restart()
	m.jobs.Kick(JobTokens)
	m.jobs.Kick(JobPurge)
	m.jobs.Kick(JobGarbage)
}

// Close stops the member. Acknowledged operations are durable already.
func (m *Member) Close() error {
	m.jobs.Stop()
	return m.core.close()
}

// Done is closed when the member stops serving, on Close or on a fatal
// error (Err says which).
func (m *Member) Done() <-chan struct{} { return m.core.Done() }

// Err returns the fatal error that stopped the member, if any.
func (m *Member) Err() error { return m.core.node.Err() }

// WaitReady blocks until the member can serve: it has a leader and has
// applied what was committed before it started.
func (m *Member) WaitReady(ctx context.Context) error { return m.core.WaitReady(ctx) }

// Transport serves RaftService for the other members.
func (m *Member) Transport() *raftnode.Transport { return m.core.transport }

// RunJob runs the periodic job name (JobPurge, ...) now.
func (m *Member) RunJob(ctx context.Context, name string) error { return m.jobs.Run(ctx, name) }

// IssueToken issues a token for user and groups, valid for ttl (0: the
// default), as the service itself: what the dev server writes for its
// user, and what tests give their clients.
func (m *Member) IssueToken(ctx context.Context, user string, groups []string, ttl time.Duration) (string, error) {
	return m.tokens.Issue(ctx, user, groups, ttl)
}

// AdminToken returns a token of the superuser that this service accepts:
// the one in Config.AdminTokenFile, or a new one, which it writes there.
func (m *Member) AdminToken(ctx context.Context) (string, error) { return m.tokens.AdminToken(ctx) }

// Authenticate returns the user token t proves, or why this service
// refuses it (fserr.ErrUnauthenticated).
func (m *Member) Authenticate(t string) (string, error) {
	id, err := m.tokens.Authenticate(t)
	if err != nil {
		return "", err
	}
	return id.Caller.User, nil
}

// AuthorizeAdmin checks that token t is a superuser's, for what needs one
// beside the RPCs (the status page): fserr.ErrUnauthenticated if t is
// empty or this service does not accept it, fserr.ErrPermission if its
// user is no superuser. With authentication off, anything passes, as the
// RPCs do.
func (m *Member) AuthorizeAdmin(t string) error {
	if m.cfg.NoAuth {
		return nil
	}
	if t == "" {
		return fserr.Errorf(fserr.ErrUnauthenticated, "no token")
	}
	id, err := m.tokens.Authenticate(t)
	if err != nil {
		return err
	}
	if !m.core.IsSuperuser(id.Caller) {
		return fserr.Errorf(fserr.ErrPermission, "%s is not a superuser: only a superuser may see the cluster's status", id.Caller.User)
	}
	return nil
}

// Superuser returns the service's superuser.
func (m *Member) Superuser() string { return m.cfg.Namespace.Superuser }
