package metaserver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The tokens someone holding the signing key could make (issue 32: the key
// was read off a member's disk): the record of a token's id, not its
// identifier, says whose token it is.

// issued is a service with tokens of alice (users) and of the superuser,
// and its signing key.
type issued struct {
	svc          *testcluster.InProcess
	alice, super *pb.TokenIdentifier
	key          []byte
}

func issueTokens(t testing.TB) *issued {
	t.Helper()
	svc := testcluster.StartInProcess(t, nil)
	c := testcluster.Client(t, svc.Addr, "")
	is := &issued{svc: svc}
	for _, who := range []struct {
		id     **pb.TokenIdentifier
		user   string
		groups []string
	}{{&is.alice, "alice", []string{"users"}}, {&is.super, testcluster.Superuser(), []string{"supergroup"}}} {
		r, err := c.CreateToken(context.Background(), who.user, who.groups, 0, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		*who.id = r.GetIdentifier()
	}
	if is.key = svc.Member.TokenKey(is.alice.GetKeyId()); len(is.key) == 0 {
		t.Fatal("the service holds no signing key")
	}
	return is
}

// forge returns id signed with the service's key.
func (is *issued) forge(t testing.TB, id *pb.TokenIdentifier) string {
	t.Helper()
	s, err := token.Sign(id, is.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTokenBoundToItsRecord signs, with the real key, alice's token with
// another user, other groups or other dates in it: each is refused,
// though its signature checks. Alice's token as issued, re-signed, is
// accepted: the key is the right one.
func TestTokenBoundToItsRecord(t *testing.T) {
	is := issueTokens(t)
	ctx := context.Background()
	privateDir(t, testcluster.Client(t, is.svc.Addr, ""))
	if user, err := is.svc.Member.Authenticate(is.forge(t, is.alice)); err != nil || user != "alice" {
		t.Fatalf("alice's token re-signed: %q, %v", user, err)
	}
	for name, edit := range map[string]func(id *pb.TokenIdentifier){
		"token 2 of root": func(id *pb.TokenIdentifier) { id.User = testcluster.Superuser() },
		"alice in the supergroup": func(id *pb.TokenIdentifier) {
			id.Groups = append(id.Groups, "supergroup")
		},
		"alice's id with the superuser's identifier": func(id *pb.TokenIdentifier) {
			proto.Merge(id, is.super)
			id.Id = is.alice.GetId()
		},
		"another issue time":  func(id *pb.TokenIdentifier) { id.Issued-- },
		"a later max date":    func(id *pb.TokenIdentifier) { id.MaxDate += time.Hour.Milliseconds() },
		"renewable otherwise": func(id *pb.TokenIdentifier) { id.Renewable = !id.Renewable },
		"past its max date":   func(id *pb.TokenIdentifier) { id.Expires = id.MaxDate + 1 },
		"an id never issued":  func(id *pb.TokenIdentifier) { id.Id = 1000 },
	} {
		t.Run(name, func(t *testing.T) {
			id := proto.Clone(is.alice).(*pb.TokenIdentifier)
			edit(id)
			forged := is.forge(t, id)
			_, err := rawMeta(t, is.svc.Addr, forged).GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: &pb.Header{},
				Path: "/private/f"})
			wantUnauthenticated(t, name, err)
		})
	}
}

// FuzzTokenBinding signs identifiers made of the fields of issued tokens
// and of the fuzzer's, with the real key: the service accepts one only if
// it is, field for field, a token it issued, and takes its caller for that
// token's user; and it accepts every token it issued.
func FuzzTokenBinding(f *testing.F) {
	is := issueTokens(f)
	records := map[uint64]*pb.TokenIdentifier{is.alice.GetId(): is.alice, is.super.GetId(): is.super}
	// user: 0 alice's, 1 the superuser's, else the fuzzer's; likewise groups.
	f.Add(is.alice.GetId(), uint8(1), "", uint8(0), "", int64(0), int64(0), int64(0), false)
	f.Add(is.alice.GetId(), uint8(0), "", uint8(0), "", int64(0), int64(0), int64(0), false)
	f.Add(is.super.GetId(), uint8(0), "", uint8(0), "", int64(0), int64(0), int64(0), false)
	f.Add(is.alice.GetId(), uint8(2), "bob", uint8(2), "wheel", int64(-1), int64(1), int64(5), true)
	f.Add(uint64(99), uint8(1), "", uint8(1), "", int64(0), int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, id uint64, userFrom uint8, user string, groupsFrom uint8, group string,
		issuedBy, maxBy, expiresBy int64, flip bool) {
		base := is.alice
		if r, ok := records[id]; ok {
			base = r
		}
		pick := func(from uint8) *pb.TokenIdentifier { return []*pb.TokenIdentifier{is.alice, is.super}[from%2] }
		forged := proto.Clone(base).(*pb.TokenIdentifier)
		forged.Id = id
		forged.User, forged.Groups = pick(userFrom).GetUser(), pick(groupsFrom).GetGroups()
		if userFrom > 1 {
			forged.User = user
		}
		if groupsFrom > 1 {
			forged.Groups = []string{group}
		}
		forged.Issued += issuedBy
		forged.MaxDate += maxBy
		forged.Expires += expiresBy
		forged.Renewable = forged.Renewable != flip
		s, err := token.Sign(forged, is.key)
		if err != nil {
			return // not UTF-8: protobuf refuses it
		}
		got, err := is.svc.Member.Authenticate(s)
		rec, known := records[id]
		same := known && forged.GetUser() == rec.GetUser() && slices.Equal(forged.GetGroups(), rec.GetGroups()) &&
			forged.GetIssued() == rec.GetIssued() && forged.GetMaxDate() == rec.GetMaxDate() &&
			forged.GetRenewable() == rec.GetRenewable() && forged.GetExpires() <= rec.GetMaxDate()
		switch {
		case err == nil && !same:
			t.Fatalf("accepted %v as %q: it is not the token %d issued (%v)", forged, got, id, rec)
		case err == nil && got != rec.GetUser():
			t.Fatalf("accepted %v as %q, token %d's user is %q", forged, got, id, rec.GetUser())
		case err != nil && same && forged.GetUser() != "":
			t.Fatalf("refused %v, the token %d issued: %v", forged, id, err)
		case err != nil && !errors.Is(err, fserr.ErrUnauthenticated):
			t.Fatalf("refused %v with %v, want UNAUTHENTICATED", forged, err)
		}
	})
}

// TestNewTokenNamesAndLifetimes: the service refuses, before proposing
// anything, a token for a name no user or group can have, and a ttl its
// max lifetime cannot hold (issue 32: --ttl 2000000h gave a max date past
// --max-lifetime); the default ttl is cut to a shorter max lifetime.
func TestNewTokenNamesAndLifetimes(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	super := testcluster.Client(t, svc.Addr, "")
	for _, c := range []struct {
		user   string
		groups []string
	}{{"root\n", nil}, {"ali ce", nil}, {"", nil}, {"a:b", nil}, {"alice", []string{"users", "two words"}},
		{"alice", []string{"ops\nsupergroup"}}} {
		if _, err := super.CreateToken(ctx, c.user, c.groups, 0, 0, true); !errors.Is(err, fserr.ErrInvalidArgument) {
			t.Errorf("a token for %q in %q: %v, want INVALID_ARGUMENT", c.user, c.groups, err)
		}
	}
	h := time.Hour
	if _, err := super.CreateToken(ctx, "alice", nil, 2000000*h, 0, true); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Errorf("a ttl of 2000000h with the default max lifetime: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := super.CreateToken(ctx, "alice", nil, 2*h, h, true); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Errorf("a ttl of 2h with a max lifetime of 1h: %v, want INVALID_ARGUMENT", err)
	}
	for _, c := range []struct{ ttl, maxLife, wantTTL, wantMax time.Duration }{
		{0, h, h, h},
		{2 * h, 0, 2 * h, token.DefaultMaxLifetime},
		{0, 0, token.DefaultTTL, token.DefaultMaxLifetime},
	} {
		r, err := super.CreateToken(ctx, "alice", nil, c.ttl, c.maxLife, true)
		if err != nil {
			t.Fatal(err)
		}
		id := r.GetIdentifier()
		ttl, maxLife := time.Duration(id.GetExpires()-id.GetIssued())*time.Millisecond,
			time.Duration(id.GetMaxDate()-id.GetIssued())*time.Millisecond
		if ttl != c.wantTTL || maxLife != c.wantMax {
			t.Errorf("--ttl %v --max-lifetime %v: a token valid %v, renewable for %v; want %v and %v",
				c.ttl, c.maxLife, ttl, maxLife, c.wantTTL, c.wantMax)
		}
	}
}
