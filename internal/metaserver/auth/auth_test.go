package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/metaserver/auth"
	"github.com/stratafs/strata/internal/metaserver/memreplica"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func newTokens(t *testing.T) (*auth.Tokens, *memreplica.Replica) {
	t.Helper()
	r := memreplica.New(statemachine.DefaultConfig("root"), time.Unix(1_000_000, 0))
	return tokensOf("c1", r), r
}

// tokensOf returns the tokens of cluster id over replica r, told of the
// changes r applies as a member's are.
func tokensOf(id string, r *memreplica.Replica) *auth.Tokens {
	tokens := auth.NewTokens(auth.Config{ClusterID: id, Superuser: "root"}, r)
	r.OnApplied = func(a statemachine.Applied) {
		if a.Tokens {
			tokens.Changed()
		}
	}
	return tokens
}

func withToken(tok string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(token.MetadataKey, token.Bearer+tok))
}

// A token issued is its user's until it expires or is revoked; a call
// without one, or with another cluster's, is refused.
func TestTokensProveTheirUser(t *testing.T) {
	tokens, r := newTokens(t)
	ctx := context.Background()
	tok, err := tokens.Issue(ctx, "alice", []string{"eng"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id, err := tokens.Identify(withToken(tok))
	if err != nil || id.Caller.User != "alice" || len(id.Caller.Groups) != 1 {
		t.Fatalf("identify: %+v, %v", id, err)
	}
	h := &pb.Header{User: "root"}
	if err := tokens.CheckCaller(withToken(tok), h); err != nil || h.User != "alice" {
		t.Fatalf("the header says %q (%v): a token's user counts, not the header's", h.User, err)
	}
	if _, err := tokens.Identify(ctx); !errors.Is(err, fserr.ErrUnauthenticated) {
		t.Fatalf("no token: %v", err)
	}
	other := tokensOf("c2", memreplica.New(statemachine.DefaultConfig("root"), r.Now()))
	foreign, err := other.Issue(ctx, "alice", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(foreign); !errors.Is(err, fserr.ErrUnauthenticated) {
		t.Fatalf("another cluster's token: %v", err)
	}
	r.Advance(2 * time.Hour)
	if _, err := tokens.Authenticate(tok); !errors.Is(err, fserr.ErrUnauthenticated) {
		t.Fatalf("an expired token: %v", err)
	}
}

// A revoked token is refused from the moment its revocation is applied.
func TestRevokedTokensAreRefused(t *testing.T) {
	tokens, r := newTokens(t)
	ctx := context.Background()
	tok, err := tokens.Issue(ctx, "bob", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(tok); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Propose(ctx, statemachine.RevokeToken.Command(&pb.RevokeTokenRequest{Header: &pb.Header{User: "bob"},
		Token: tok})); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(tok); !errors.Is(err, fserr.ErrUnauthenticated) {
		t.Fatalf("a revoked token: %v", err)
	}
}

// A member that does not lead and lacks the key answers NOT_LEADER: it may
// not have applied the key yet, and the leader judges.
func TestAFollowerWithoutTheKeyDefersToTheLeader(t *testing.T) {
	tokens, r := newTokens(t)
	tok, err := tokens.Issue(context.Background(), "alice", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	followerReplica := memreplica.New(statemachine.DefaultConfig("root"), r.Now())
	followerReplica.SetLeader(false)
	follower := tokensOf("c1", followerReplica)
	if _, err := follower.Authenticate(tok); !errors.Is(err, fserr.ErrNotLeader) {
		t.Fatalf("a follower without the key: %v", err)
	}
}

// The leader's upkeep draws a key, and forgets the records of tokens long
// past their max date.
func TestUpkeepForgetsOldTokens(t *testing.T) {
	tokens, r := newTokens(t)
	ctx := context.Background()
	if err := tokens.Upkeep(ctx); err != nil {
		t.Fatal(err)
	}
	var keys map[uint32][]byte
	_ = r.Applied(func(rd kv.Reader) (err error) { keys, err = statemachine.TokenKeys(rd); return err })
	if len(keys) != 1 {
		t.Fatalf("%d signing keys after the upkeep", len(keys))
	}
	if _, err := tokens.Issue(ctx, "alice", nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	r.Advance(time.Duration(statemachine.DefaultTokenMaxLifetime)*time.Millisecond + 25*time.Hour)
	if err := tokens.Upkeep(ctx); err != nil {
		t.Fatal(err)
	}
	var left []uint64
	_ = r.Applied(func(rd kv.Reader) (err error) {
		left, err = statemachine.TokensPast(rd, r.Now().UnixMilli(), 10)
		return err
	})
	if len(left) != 0 {
		t.Fatalf("records of tokens %v kept past their max date", left)
	}
}

// Every leader signs block tokens with the keys the workers have: they
// derive from the one secret in the state, drawn once.
func TestBlockTokenKeysComeFromTheState(t *testing.T) {
	r := memreplica.New(statemachine.DefaultConfig("root"), time.Unix(1_000_000, 0))
	cfg := auth.Config{ClusterID: "c1", Superuser: "root"}
	first, second := auth.NewBlockTokens(cfg, r), auth.NewBlockTokens(cfg, r)
	ctx := context.Background()
	tok, _, err := first.Issue(ctx, blocktoken.Read, "", 7, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := second.Keys(ctx)
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v, %v", keys, err)
	}
	byID := map[uint32]blocktoken.Key{}
	for _, k := range keys {
		byID[k.Id] = blocktoken.Key{ID: k.Id, Secret: k.Secret, Expires: k.Expires}
	}
	got, err := blocktoken.Verify(tok, r.Now().UnixMilli(), func(id uint32) (blocktoken.Key, bool) {
		k, ok := byID[id]
		return k, ok
	})
	if err != nil || got.Allows(blocktoken.Read, statemachine.DefaultNamespace, 7, "") != nil {
		t.Fatalf("a token of one member checked with another's keys: %+v, %v", got, err)
	}
}

// A token re-signed with the leaked key as another user's, or with other
// groups or dates, is refused: the record of its id says whose it is.
func TestATokenIsItsRecords(t *testing.T) {
	tokens, r := newTokens(t)
	text, err := tokens.Issue(context.Background(), "alice", []string{"users"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := token.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[uint32][]byte
	_ = r.Applied(func(rd kv.Reader) (err error) { keys, err = statemachine.TokenKeys(rd); return err })
	for name, edit := range map[string]func(*pb.TokenIdentifier){
		"another user":   func(id *pb.TokenIdentifier) { id.User = "root" },
		"another group":  func(id *pb.TokenIdentifier) { id.Groups = []string{"supergroup"} },
		"a later expiry": func(id *pb.TokenIdentifier) { id.Expires, id.MaxDate = id.MaxDate*2, id.MaxDate*2 },
	} {
		id := proto.CloneOf(tok.ID)
		edit(id)
		forged, err := token.Sign(id, keys[id.GetKeyId()])
		if err != nil {
			t.Fatal(err)
		}
		if who, err := tokens.Authenticate(forged); !errors.Is(err, fserr.ErrUnauthenticated) {
			t.Errorf("%s: accepted as %+v (%v)", name, who, err)
		}
	}
}
