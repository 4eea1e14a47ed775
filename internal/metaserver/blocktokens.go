package metaserver

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Block access tokens (docs/security.md): the leader hands a client a
// token with every answer that lets it read or write a file's blocks, and
// the workers, which heartbeat to the leader, get the keys to check them.
// The keys derive from one cluster secret in the replicated state, drawn by
// the first leader that needs it, so a new leader signs what the workers
// accept.

// blockSecretName names the cluster secret the keys derive from.
const blockSecretName = "block-token"

// blockKeyring is the keyring, once the secret is known.
type blockKeyring struct {
	mu   sync.Mutex
	ring *blocktoken.Keyring
}

// keyring returns the keyring, reading the secret from the state, or, if
// none was recorded yet, recording one first.
//
// NB: SetSecret keeps the first secret applied, so a leader that proposes
// one while an earlier leader's is committed but not yet applied here reads
// back the earlier one: every member derives the same keys.
func (s *Server) keyring(ctx context.Context) (blocktoken.Keyring, error) {
	k := &s.blockKeys
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ring != nil {
		return *k.ring, nil
	}
	for attempt := 0; ; attempt++ {
		var secret []byte
		err := s.store.View(func(r kv.Reader) (err error) {
			secret, err = statemachine.Secret(r, blockSecretName)
			return err
		})
		if err != nil {
			return blocktoken.Keyring{}, err
		}
		if secret != nil {
			k.ring = &blocktoken.Keyring{Secret: secret, Period: s.cfg.BlockKeyPeriod}
			return *k.ring, nil
		}
		if attempt > 0 {
			return blocktoken.Keyring{}, errNoSecret
		}
		fresh := make([]byte, 32)
		_, _ = rand.Read(fresh)
		cmd := statemachine.SetSecret.Command(&pb.SetSecretCommand{Name: blockSecretName, Secret: fresh})
		if _, err := s.propose(ctx, cmd); err != nil {
			return blocktoken.Keyring{}, err
		}
	}
}

// errNoSecret: a secret was applied but not found (never, but for a bug).
var errNoSecret = errors.New("metaserver: the block token secret was recorded but cannot be read")

// issue returns a token for the file and its expiry.
func (s *Server) issue(ctx context.Context, mode blocktoken.Mode, ns string, inode uint64, object string) ([]byte, int64, error) {
	ring, err := s.keyring(ctx)
	if err != nil {
		return nil, 0, err
	}
	if ns == "" {
		ns = namespace.DefaultNamespace
	}
	tok, exp := ring.Issue(s.cfg.Clock().UnixMilli(), s.cfg.BlockTokenLifetime, mode, ns, inode, object)
	return tok, exp, nil
}

// grant adds the block access token to an answer that hands out a file's
// blocks to read (Open; to load and drop, for a superuser's Open with
// cache_admin) or to write (Create, Append, Flush); other answers pass
// unchanged.
func (s *Server) grant(ctx context.Context, req request, resp proto.Message) error {
	ns := req.GetHeader().GetNamespace()
	var err error
	switch r := resp.(type) {
	case *pb.OpenResponse:
		mode := blocktoken.Read
		if open, ok := req.(*pb.OpenRequest); ok && open.GetCacheAdmin() {
			if !s.machine.FS().IsSuperuser(caller(req.GetHeader())) {
				return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may load files into the caches or drop them (%s is not one)",
					open.GetPath(), req.GetHeader().GetUser())
			}
			mode = blocktoken.Cache
		}
		if !r.Inline {
			r.BlockToken, r.BlockTokenExpires, err = s.issue(ctx, mode, ns, r.GetStatus().GetInodeId(), r.ObjectKey)
		}
	case *pb.CreateResponse:
		if r.StoreUri != "" {
			r.BlockToken, r.BlockTokenExpires, err = s.issue(ctx, blocktoken.Write, ns, r.GetStatus().GetInodeId(), r.ObjectKey)
		}
	case *pb.AppendResponse:
		r.BlockToken, r.BlockTokenExpires, err = s.issue(ctx, blocktoken.Write, ns, r.GetStatus().GetInodeId(), "")
	case *pb.FlushResponse:
		inode := req.(*pb.FlushRequest).GetInodeId()
		r.BlockToken, r.BlockTokenExpires, err = s.issue(ctx, blocktoken.Write, ns, inode, "")
	}
	return err
}

// workerTrust is what a heartbeat's answer tells a worker to trust: the
// keys of the block tokens, and the namespaces whose buckets it may open.
func (s *Server) workerTrust(ctx context.Context, resp *pb.HeartbeatResponse) error {
	ring, err := s.keyring(ctx)
	if err != nil {
		return err
	}
	for _, k := range ring.Around(s.cfg.Clock().UnixMilli()) {
		resp.BlockKeys = append(resp.BlockKeys, &pb.BlockKey{Id: k.ID, Secret: k.Secret, Expires: k.Expires})
	}
	return s.store.View(func(r kv.Reader) error {
		list, err := namespace.Namespaces(r)
		for _, ns := range list {
			if !ns.InTrash() {
				resp.Namespaces = append(resp.Namespaces, &pb.NamespaceInfo{Name: ns.Name,
					Mode: pb.NamespaceMode(ns.Mode), StoreUri: ns.StoreURI})
			}
		}
		return err
	})
}
