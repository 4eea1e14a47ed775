package cachemode

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Service is what cache mode needs of the namespace service's leader. Its
// methods are safe for concurrent use.
type Service interface {
	// View runs fn against the applied state after a read barrier: what
	// fn reads is at least as new as everything committed before.
	View(ctx context.Context, fn func(kv.Reader) error) error
	// Propose logs cmd, stamped with the leader's time and settings, and
	// waits until it is applied; the error is the command's answer if it
	// failed, or why it was not applied.
	Propose(ctx context.Context, cmd *pb.Command) (statemachine.Result, error)
	// Try applies cmd, stamped as Propose would, to a copy of the applied
	// state that is then thrown away, and returns what applying it gave:
	// whether the command would succeed now, before its bucket side is done.
	Try(ctx context.Context, cmd *pb.Command) (statemachine.Result, error)
	// Bucket returns the store at uri, behind the one retry layer.
	Bucket(ctx context.Context, uri string) (object.Store, error)
	// Now is the leader's clock.
	Now() time.Time
}

// Mode carries out the bucket side of the operations of cache-mode
// namespaces. It is safe for concurrent use.
type Mode struct {
	svc Service
	fs  *namespace.FS
	log *slog.Logger
	mu  struct {
		sync.Mutex
		flights  map[flightKey]*flight
		holds    map[*hold]struct{}
		progress map[progressKey]*progress
		// skipsLogged holds, for each directory ("namespace\x00path")
		// whose listing left keys out, the sum of those last logged.
		skipsLogged map[string]uint64
	}
}

// New returns a Mode for the service svc, reading the state with fs.
func New(svc Service, fs *namespace.FS, log *slog.Logger) *Mode {
	m := &Mode{svc: svc, fs: fs, log: log}
	m.mu.flights = map[flightKey]*flight{}
	m.mu.holds = map[*hold]struct{}{}
	m.mu.progress = map[progressKey]*progress{}
	m.mu.skipsLogged = map[string]uint64{}
	return m
}

// Prepare does the bucket side step of an operation for req in cache-mode
// namespace ns (its record) and returns the request for the service to
// carry out: req, or a copy with what the service sets (an object's
// version). An operation whose bucket side fails is not carried out; one
// that cannot be done in the namespace (a missing file, a permission) is
// left for the service to refuse, with nothing done in the bucket. Unless it
// fails, the caller calls release once the service carried the request out
// (or gave up on it): until then the mutation holds its paths (hold.go).
func (m *Mode) Prepare(ctx context.Context, ns *kvschema.Namespace, step *Step, req proto.Message) (out proto.Message, release func(), err error) {
	if step == NoBucketSide {
		return req, func() {}, nil
	}
	store, err := m.svc.Bucket(ctx, ns.StoreURI)
	if err != nil {
		return nil, nil, err
	}
	c := &call{Mode: m, ns: ns, store: store}
	if out, err = step.run(ctx, c, req); err != nil {
		c.release()
		return nil, nil, err
	}
	return out, c.release, nil
}

// call is one operation being prepared.
type call struct {
	*Mode
	ns    *kvschema.Namespace
	store object.Store
	held  *hold // the mutation's paths, until release
}

// Step is the bucket side of one operation: what Prepare does for it. The
// service's table of operations names one for each (internal/metaserver).
type Step struct {
	name string
	run  func(ctx context.Context, c *call, req proto.Message) (proto.Message, error)
}

// String names the step.
func (s *Step) String() string { return s.name }

// The operations' bucket sides, each named after its operation; the
// operations left out have none (NoBucketSide): the service's own commands,
// namespace administration, tokens, and the writes of a file's blocks,
// which reach the bucket through the workers.
var (
	NoBucketSide = &Step{name: "none"}

	GetFileStatus     = entryStep("GetFileStatus", (*pb.GetFileStatusRequest).GetPath)
	GetContentSummary = entryStep("GetContentSummary", (*pb.GetContentSummaryRequest).GetPath)
	SetPermission     = entryStep("SetPermission", (*pb.SetPermissionRequest).GetPath)
	SetOwner          = entryStep("SetOwner", (*pb.SetOwnerRequest).GetPath)
	SetTimes          = entryStep("SetTimes", (*pb.SetTimesRequest).GetPath)
	RecoverLease      = entryStep("RecoverLease", (*pb.RecoverLeaseRequest).GetPath)
	ModifyAcl         = entryStep("ModifyAcl", (*pb.ModifyAclRequest).GetPath)
	GetAclStatus      = entryStep("GetAclStatus", (*pb.GetAclStatusRequest).GetPath)

	List     = step("List", prepareList)
	Open     = step("Open", prepareOpen)
	Mkdirs   = step("Mkdirs", prepareMkdirs)
	Create   = step("Create", prepareCreate)
	Complete = step("Complete", prepareComplete)
	Delete   = step("Delete", prepareDelete)
	Rename   = step("Rename", prepareRename)
)

func step[Req proto.Message](name string, run func(context.Context, *call, Req) (proto.Message, error)) *Step {
	return &Step{name: name, run: func(ctx context.Context, c *call, req proto.Message) (proto.Message, error) {
		return run(ctx, c, req.(Req))
	}}
}

// entryStep makes the path of a request fresh: the bucket side of the
// operations on one existing path.
func entryStep[Req proto.Message](name string, path func(Req) string) *Step {
	return step(name, func(ctx context.Context, c *call, r Req) (proto.Message, error) {
		_, err := c.ensureEntry(ctx, path(r))
		return r, err
	})
}

// prepareOpen makes the file fresh, checking it against the bucket at
// once when the reader asks for it (its worker found the object changed).
func prepareOpen(ctx context.Context, c *call, r *pb.OpenRequest) (proto.Message, error) {
	if r.GetRefresh() {
		return r, c.checkEntry(ctx, r.GetPath())
	}
	_, err := c.ensureEntry(ctx, r.GetPath())
	return r, err
}

// prepareList makes the listed directory's entries fresh, when a listing
// starts (its later pages read what the first one loaded).
func prepareList(ctx context.Context, c *call, r *pb.ListRequest) (proto.Message, error) {
	v, err := c.ensureEntry(ctx, r.GetPath())
	if err != nil || v.Node == nil || !v.Node.IsDir() || r.GetStartAfter() != "" {
		return r, err
	}
	return r, c.ensureListed(ctx, r.GetPath(), v)
}

// UploadAge is how old an upload in progress must be before the sweep
// takes it for abandoned: a day, as S3's lifecycle rules usually say.
const UploadAge = 24 * time.Hour

// SweepUploads aborts the multipart uploads under key (a file's key; ""
// for the whole bucket) in ns's bucket that started more than UploadAge
// ago: what workers that died mid-write left (a live worker completes or
// aborts its own). It reports how many it aborted. A store that cannot list
// a whole bucket's uploads (MinIO lists one key's only) sweeps nothing for
// "": the service sweeps each abandoned file's key instead.
func (m *Mode) SweepUploads(ctx context.Context, ns *kvschema.Namespace, key string) (int, error) {
	store, err := m.svc.Bucket(ctx, ns.StoreURI)
	if err != nil {
		return 0, err
	}
	ups, err := store.ListUploads(ctx, key)
	if errors.Is(err, errors.ErrUnsupported) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	old := m.svc.Now().Add(-UploadAge)
	n := 0
	for _, u := range ups {
		if u.Started.Before(old) && (key == "" || u.Key == key) {
			if err := store.AbortMultipart(ctx, u); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
