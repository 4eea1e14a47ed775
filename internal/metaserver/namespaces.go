package metaserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object/objstore"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The namespaces' administration: a new namespace's bucket is checked
// before the namespace is created, a deleted one waits in the trash, and
// the leader removes it for good once its time there is over.

// CreateNamespace implements MetaService: the bucket is checked first
// (checkStore), so that a namespace that cannot hold data is never made.
func (s *Server) CreateNamespace(ctx context.Context, r *pb.CreateNamespaceRequest) (*pb.CreateNamespaceResponse, error) {
	if err := s.admitNamespace(ctx, r); err != nil {
		return nil, err
	}
	return call[*pb.CreateNamespaceResponse](ctx, s, sm.CreateNamespace, r)
}

// admitNamespace checks what can be checked of a new namespace before it
// is proposed: the caller's right and the name (so that a bad one is not
// probed for), then the bucket. The command checks the first two again.
func (s *Server) admitNamespace(ctx context.Context, r *pb.CreateNamespaceRequest) error {
	if err := s.checkCaller(ctx, r.GetHeader()); err != nil {
		return err
	}
	info := r.GetNamespace()
	if !s.machine.FS().IsSuperuser(caller(r.GetHeader())) || !namespace.ValidNamespaceName(info.GetName()) {
		return nil // the command answers, with the reason
	}
	return s.checkStore(ctx, info)
}

// probeTimeout bounds the check of a new namespace's bucket.
const probeTimeout = 15 * time.Second

// checkStore checks the bucket of namespace info: its URI must name a kind
// of store Strata knows, in its full form (file:///absolute/dir,
// s3://bucket/prefix), and the bucket must answer. A block-mode namespace's
// bucket must take a write: a probe object is written and removed, so that
// a bucket Strata cannot write is refused now, not at the first large file.
// A cache-mode namespace's bucket belongs to others and is only listed.
func (s *Server) checkStore(ctx context.Context, info *pb.NamespaceInfo) error {
	uri := info.GetStoreUri()
	fail := func(format string, args ...any) error {
		return fserr.Errorf(fserr.ErrInvalidArgument, "createNamespace %s: store %q: %s", info.GetName(), uri,
			fmt.Sprintf(format, args...))
	}
	if uri == "" {
		return fail("no store URI: give file:///absolute/dir or s3://bucket/prefix")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	open := s.cfg.OpenStore
	if open == nil {
		open = objstore.Open // one attempt: the caller hears of a failure at once
	}
	store, err := open(ctx, uri)
	if err != nil {
		return fail("%v", strings.TrimPrefix(err.Error(), "objstore: "))
	}
	if info.GetMode() == pb.NamespaceMode_NAMESPACE_MODE_CACHE {
		if _, err := store.List(ctx, "", "", 1); err != nil {
			return fail("the bucket cannot be listed: %v", err)
		}
		return nil
	}
	key := probeKey()
	if _, err := store.Put(ctx, key, strings.NewReader(key), int64(len(key))); err != nil {
		return fail("a probe object could not be written to the bucket: %v", err)
	}
	if err := store.Delete(ctx, key); err != nil {
		return fail("the probe object %s could not be removed from the bucket: %v", key, err)
	}
	return nil
}

// probeKey names a probe object: never a block's name (blocks/...), and
// never the same twice.
func probeKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "strata-probe-" + hex.EncodeToString(b[:])
}

// EnsureNamespace creates namespace info unless it exists, after checking
// its bucket; the dev server uses it for "default". A namespace of that
// name in the trash is left there, with a warning that says how to bring
// it back.
func (s *Server) EnsureNamespace(ctx context.Context, info *pb.NamespaceInfo) error {
	var rec *kvschema.Namespace
	err := s.view(ctx, func(r kv.Reader) (err error) {
		rec, err = namespace.Record(r, info.GetName())
		return err
	})
	switch {
	case err != nil && !errors.Is(err, namespace.ErrNoNamespace):
		return err
	case rec != nil && rec.InTrash():
		s.cfg.Log.Warn(fmt.Sprintf("namespace %s was deleted and is in the trash until %s; "+
			"bring it back with: strata admin ns restore %s", rec.Name, namespace.Stamp(rec.PurgeAt), rec.Name))
		return nil
	case rec != nil:
		return nil
	}
	if err := s.checkStore(ctx, info); err != nil {
		return err
	}
	_, err = s.propose(ctx, sm.CreateNamespace.Command(&pb.CreateNamespaceRequest{
		Header: &pb.Header{User: s.cfg.Namespace.Superuser}, Namespace: info}))
	if errors.Is(err, namespace.ErrExists) {
		return nil
	}
	return err
}

// DeleteNamespace implements MetaService. A request that says nothing of
// a namespace that holds anything is refused if it does: only commands
// logged before the mode existed meant "remove it at once".
func (s *Server) DeleteNamespace(ctx context.Context, r *pb.DeleteNamespaceRequest) (*pb.DeleteNamespaceResponse, error) {
	if r.GetMode() == pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_UNSPECIFIED {
		r.Mode = pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_IF_EMPTY
	}
	return call[*pb.DeleteNamespaceResponse](ctx, s, sm.DeleteNamespace, r)
}

// RestoreNamespace implements MetaService.
func (s *Server) RestoreNamespace(ctx context.Context, r *pb.RestoreNamespaceRequest) (*pb.RestoreNamespaceResponse, error) {
	return call[*pb.RestoreNamespaceResponse](ctx, s, sm.RestoreNamespace, r)
}

// GetServerDefaults implements MetaService. Any member answers, with its
// own settings (every member of a group is started with the same; the
// leader stamps its own on the commands it proposes).
func (s *Server) GetServerDefaults(context.Context, *pb.GetServerDefaultsRequest) (*pb.GetServerDefaultsResponse, error) {
	ns := s.cfg.Namespace
	return &pb.GetServerDefaultsResponse{BlockSize: cmp.Or(ns.BlockSize, namespace.DefaultBlockSize),
		Replication: namespace.DefaultReplication, InlineLimit: uint32(ns.InlineLimit),
		TrashIntervalMs: s.cfg.TrashInterval.Milliseconds(), NamespaceTrashMs: ns.NamespaceTrash}, nil
}

// PurgeExpiredNamespaces removes for good, one command each, the
// namespaces whose time in the trash is over. The leader runs it every
// second; their content then goes as any deleted tree's does (purge
// commands, and the block collector for their buckets' objects).
func (s *Server) PurgeExpiredNamespaces(ctx context.Context) error {
	if !s.isLeader() {
		return nil
	}
	var expired []*kvschema.Namespace
	if err := s.store.View(func(r kv.Reader) (err error) {
		expired, err = namespace.ExpiredNamespaces(r, s.cfg.Clock().UnixMilli())
		return err
	}); err != nil {
		return err
	}
	for _, ns := range expired {
		res, err := s.propose(ctx, sm.PurgeNamespace.Command(&pb.PurgeNamespaceCommand{Name: ns.Name, Deleted: ns.Deleted}))
		if err != nil {
			return err
		}
		if res.Count > 0 {
			s.cfg.Log.Info("namespace removed for good after its time in the trash", "namespace", ns.Name,
				"deleted", namespace.Stamp(ns.Deleted), "bucket", ns.StoreURI)
		}
	}
	return nil
}
