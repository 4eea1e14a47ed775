package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// BlockTokens issues the block access tokens (docs/security.md): the
// leader hands a client a token with every answer that lets it read or
// write a file's blocks, and the workers, which heartbeat to the leader,
// get the keys to check them. The keys derive from one cluster secret in
// the replicated state, drawn by the first leader that needs it, so a new
// leader signs what the workers accept. It is safe for concurrent use.
type BlockTokens struct {
	cfg   Config
	state State
	mu    sync.Mutex
	ring  *blocktoken.Keyring // once the secret is known
}

// NewBlockTokens returns the block tokens of the member st.
func NewBlockTokens(cfg Config, st State) *BlockTokens { return &BlockTokens{cfg: cfg, state: st} }

// blockSecretName names the cluster secret the keys derive from.
const blockSecretName = "block-token"

// keyring returns the keyring, reading the secret from the state, or, if
// none was recorded yet, recording one first.
//
// NB: SetSecret keeps the first secret applied, so a leader that proposes
// one while an earlier leader's is committed but not yet applied here reads
// back the earlier one: every member derives the same keys.
func (b *BlockTokens) keyring(ctx context.Context) (blocktoken.Keyring, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ring != nil {
		return *b.ring, nil
	}
	for attempt := 0; ; attempt++ {
		var secret []byte
		err := b.state.Applied(func(r kv.Reader) (err error) {
			secret, err = statemachine.Secret(r, blockSecretName)
			return err
		})
		if err != nil {
			return blocktoken.Keyring{}, err
		}
		if secret != nil {
			b.ring = &blocktoken.Keyring{Secret: secret, Period: b.cfg.BlockKeyPeriod}
			return *b.ring, nil
		}
		if attempt > 0 {
			return blocktoken.Keyring{}, errNoSecret
		}
		fresh := make([]byte, 32)
		_, _ = rand.Read(fresh)
		cmd := statemachine.SetSecret.Command(&pb.SetSecretCommand{Name: blockSecretName, Secret: fresh})
		if _, err := b.state.Propose(ctx, cmd); err != nil {
			return blocktoken.Keyring{}, err
		}
	}
}

// errNoSecret: a secret was applied but not found (never, but for a bug).
var errNoSecret = errors.New("auth: the block token secret was recorded but cannot be read")

// Issue returns a token that allows mode on the blocks of file inode of
// namespace ns (its object, in a cache-mode namespace), whose storage
// policy is policy (0: the default), and its expiry.
func (b *BlockTokens) Issue(ctx context.Context, mode blocktoken.Mode, ns string, inode uint64, object string, policy uint32) ([]byte, int64, error) {
	ring, err := b.keyring(ctx)
	if err != nil {
		return nil, 0, err
	}
	tok, exp := ring.IssueToken(b.state.Now().UnixMilli(), b.cfg.BlockTokenLifetime, blocktoken.Token{Mode: mode,
		Namespace: blocktoken.NamespaceOf(ns), Inode: inode, Object: object, Policy: uint8(policy)})
	return tok, exp, nil
}

// Keys returns the keys a worker checks block tokens with now.
func (b *BlockTokens) Keys(ctx context.Context) ([]*pb.BlockKey, error) {
	ring, err := b.keyring(ctx)
	if err != nil {
		return nil, err
	}
	var keys []*pb.BlockKey
	for _, k := range ring.Around(b.state.Now().UnixMilli()) {
		keys = append(keys, &pb.BlockKey{Id: k.ID, Secret: k.Secret, Expires: k.Expires})
	}
	return keys, nil
}
