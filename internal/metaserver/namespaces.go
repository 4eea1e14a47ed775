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
	"github.com/stratafs/strata/internal/object/objstore"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The namespaces' administration: a new namespace's bucket is checked
// before the namespace is created, a deleted one waits in the trash, and
// the leader removes it for good once its time there is over.

// admitNamespace checks what can be checked of a new namespace before it
// is proposed: the caller's right and the name (so that a bad one is not
// probed for), then the bucket (checkStore), so that a namespace that
// cannot hold data is never made. The command checks the first two again.
func admitNamespace(ctx context.Context, m *Member, req sm.Request) error {
	r := req.(*pb.CreateNamespaceRequest)
	info := r.GetNamespace()
	if !m.core.IsSuperuser(sm.CallerOf(r.GetHeader())) || !sm.ValidNamespaceName(info.GetName()) {
		return nil // the command answers, with the reason
	}
	return m.checkStore(ctx, info)
}

// probeTimeout bounds the check of a new namespace's bucket.
const probeTimeout = 15 * time.Second

// checkStore checks the bucket of namespace info: its URI must name a kind
// of store Strata knows, in its full form (file:///absolute/dir,
// s3://bucket/prefix), and the bucket must answer. A block-mode namespace's
// bucket must take a write: a probe object is written and removed, so that
// a bucket Strata cannot write is refused now, not at the first large file.
// A cache-mode namespace's bucket belongs to others and is only listed.
func (m *Member) checkStore(ctx context.Context, info *pb.NamespaceInfo) error {
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
	open := m.cfg.OpenStore
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
func (m *Member) EnsureNamespace(ctx context.Context, info *pb.NamespaceInfo) error {
	var rec *kvschema.Namespace
	err := m.core.View(ctx, func(r kv.Reader) (err error) {
		rec, err = sm.AnyNamespaceRecord(r, info.GetName())
		return err
	})
	switch {
	case err != nil && !errors.Is(err, fserr.ErrNoNamespace):
		return err
	case rec != nil && rec.InTrash():
		m.cfg.Log.Warn(fmt.Sprintf("namespace %s was deleted and is in the trash until %s; "+
			"bring it back with: strata admin ns restore %s", rec.Name, sm.Stamp(rec.PurgeAt), rec.Name))
		return nil
	case rec != nil:
		return nil
	}
	if err := m.checkStore(ctx, info); err != nil {
		return err
	}
	_, err = m.core.Propose(ctx, sm.CreateNamespace.Command(&pb.CreateNamespaceRequest{
		Header: &pb.Header{User: m.cfg.Namespace.Superuser}, Namespace: info}))
	if errors.Is(err, fserr.ErrExists) {
		return nil
	}
	return err
}

// serverDefaults answers GetServerDefaults. Any member answers, with its
// own settings (every member of a group is started with the same; the
// leader stamps its own on the commands it proposes).
func (m *Member) serverDefaults() *pb.GetServerDefaultsResponse {
	ns := m.cfg.Namespace
	return &pb.GetServerDefaultsResponse{BlockSize: cmp.Or(ns.BlockSize, sm.DefaultBlockSize),
		Replication: sm.DefaultReplication, InlineLimit: uint32(ns.InlineLimit),
		TrashIntervalMs: m.cfg.TrashInterval.Milliseconds(), NamespaceTrashMs: ns.NamespaceTrash}
}
