package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/storagepolicy"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// What the worker trusts (docs/security.md): block access tokens signed
// with the keys the namespace service gave it, and the buckets of the
// namespaces it told it about. Both come with every heartbeat's answer; a
// request naming a key or a namespace the worker has not heard of makes it
// heartbeat at once (one heartbeat for every request waiting, and none
// once one answered after the request came) before it refuses.

// trust is the keys and namespaces of the last heartbeat's answer.
type trust struct {
	mu struct {
		sync.Mutex
		keys       map[uint32]blocktoken.Key
		namespaces map[string]*pb.NamespaceInfo
	}
	// beatMu serialises heartbeats; lastBeat is when the last one that
	// was answered started.
	beatMu   sync.Mutex
	lastBeat time.Time
}

// update takes in the keys and namespaces of a heartbeat's answer.
func (t *trust) update(r *pb.HeartbeatResponse) {
	keys := make(map[uint32]blocktoken.Key, len(r.GetBlockKeys()))
	for _, k := range r.GetBlockKeys() {
		keys[k.GetId()] = blocktoken.Key{ID: k.GetId(), Secret: k.GetSecret(), Expires: k.GetExpires()}
	}
	nss := make(map[string]*pb.NamespaceInfo, len(r.GetNamespaces()))
	for _, ns := range r.GetNamespaces() {
		nss[ns.GetName()] = ns
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.keys, t.mu.namespaces = keys, nss
}

func (t *trust) key(id uint32) (blocktoken.Key, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.mu.keys[id]
	return k, ok
}

func (t *trust) namespace(name string) *pb.NamespaceInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.namespaces[name]
}

// access is what a request asks of a file's blocks.
type access struct {
	mode      blocktoken.Mode
	namespace string // "" is the default namespace
	inode     uint64
	object    string // cache mode's object key
	storeURI  string // the client's idea of the bucket; "" or the namespace's
	token     []byte
}

func refAccess(ref *pb.BlockRef, mode blocktoken.Mode) access {
	return access{mode: mode, namespace: ref.GetNamespace(), inode: ref.GetInodeId(),
		object: ref.GetObjectKey(), storeURI: ref.GetStoreUri(), token: ref.GetBlockToken()}
}

// grant is what a token allows a request: the bucket of its namespace,
// the only one it may touch, and the storage policy of its file.
type grant struct {
	uri    string
	policy storagepolicy.Policy
}

// authorize checks that a's token allows it and returns what it grants.
// Its errors are PERMISSION_DENIED, saying why. A request it allows is its
// connection's authenticated call (connlimit).
func (w *Worker) authorize(ctx context.Context, a access) (grant, error) {
	uri, tok, err := w.verify(ctx, a)
	if err != nil {
		return grant{}, err
	}
	return grant{uri: uri, policy: storagepolicy.Of(storagepolicy.ID(tok.Policy))}, nil
}

// verify checks a's token and namespace and returns the namespace's
// bucket URI and the token.
func (w *Worker) verify(ctx context.Context, a access) (string, blocktoken.Token, error) {
	asked := time.Now()
	ns := blocktoken.NamespaceOf(a.namespace)
	now := w.cfg.clock().UnixMilli()
	tok, err := blocktoken.Verify(a.token, now, w.trust.key)
	if errors.Is(err, blocktoken.ErrUnknownKey) && w.heartbeatSince(ctx, asked) {
		tok, err = blocktoken.Verify(a.token, now, w.trust.key)
	}
	if err != nil {
		return "", tok, fserr.Errorf(fserr.ErrPermission, "%s of inode %d refused: %v", a.mode, a.inode, err)
	}
	if err := tok.Allows(a.mode, ns, a.inode, a.object); err != nil {
		return "", tok, fserr.Errorf(fserr.ErrPermission, "%s of inode %d in namespace %s refused: %v", a.mode, a.inode, ns, err)
	}
	info := w.trust.namespace(ns)
	if info == nil && w.heartbeatSince(ctx, asked) {
		info = w.trust.namespace(ns)
	}
	if info == nil {
		return "", tok, fserr.Errorf(fserr.ErrPermission, "%s refused: the namespace service names no namespace %q", a.mode, ns)
	}
	if a.storeURI != "" && a.storeURI != info.GetStoreUri() {
		return "", tok, fserr.Errorf(fserr.ErrPermission,
			"%s refused: bucket %q is not the bucket of namespace %s; a worker opens only the buckets the namespace service names",
			a.mode, a.storeURI, ns)
	}
	connlimit.Authenticated(ctx)
	return info.GetStoreUri(), tok, nil
}

// authorizeRef authorizes mode (a read, or a load or drop: Cache) on the
// block ref names and points ref at the namespace's bucket, where the read
// and its fetches go. It returns the file's storage policy.
func (w *Worker) authorizeRef(ctx context.Context, ref *pb.BlockRef, mode blocktoken.Mode) (storagepolicy.Policy, error) {
	g, err := w.authorize(ctx, refAccess(ref, mode))
	if err != nil {
		return storagepolicy.Policy{}, err
	}
	ref.StoreUri = g.uri
	return g.policy, nil
}

// heartbeatSince makes sure a heartbeat was answered that started after
// asked, heartbeating now if none did, and reports whether one was.
func (w *Worker) heartbeatSince(ctx context.Context, asked time.Time) bool {
	w.trust.beatMu.Lock()
	defer w.trust.beatMu.Unlock()
	if w.trust.lastBeat.After(asked) {
		return true
	}
	return w.heartbeatLocked(ctx) == nil
}

func (w *Worker) heartbeatLocked(ctx context.Context) error {
	meta := w.meta.Load()
	if meta == nil {
		return fmt.Errorf("worker: not serving yet")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := (*meta).Heartbeat(ctx, &pb.HeartbeatRequest{Worker: w.info(w.advertise)})
	if err != nil {
		return err
	}
	w.trust.update(resp)
	w.trust.lastBeat = start
	w.dropBlocks(resp.GetDropped())
	return nil
}

// answered takes in the keys and namespaces of the answer to a heartbeat
// sent at start by the worker's loops.
func (t *trust) answered(r *pb.HeartbeatResponse, start time.Time) {
	t.beatMu.Lock()
	defer t.beatMu.Unlock()
	t.update(r)
	if start.After(t.lastBeat) {
		t.lastBeat = start
	}
}
