package metaserver_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The security tests (docs/security.md): every way a client could claim
// an identity it was not given is refused; what the mode bits forbid is
// refused; what only the superuser may do is refused to others. Calls go
// over gRPC, as a client's would.

// rawMeta returns a MetaService client of addr that sends tok ("" none)
// and whatever headers the test writes, as a hostile client could.
func rawMeta(t testing.TB, addr, tok string) pb.MetaServiceClient {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(token.Credentials(tok)))
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return pb.NewMetaServiceClient(cc)
}

func wantUnauthenticated(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(rpcerr.FromStatus(err), fserr.ErrUnauthenticated) {
		t.Fatalf("%s: %v, want UNAUTHENTICATED", what, err)
	}
}

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(rpcerr.FromStatus(err), fserr.ErrPermission) {
		t.Fatalf("%s: %v, want PERMISSION_DENIED", what, err)
	}
}

// privateDir makes /private, the superuser's, mode 0700, with a file.
func privateDir(t *testing.T, super *client.Client) {
	t.Helper()
	ctx := context.Background()
	if _, err := super.Mkdirs(ctx, "/private", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := super.SetPermission(ctx, "/private", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := super.WriteFile(ctx, "/private/f", []byte("secret"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestSpoofedIdentitiesAreRefused(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	super := testcluster.Client(t, svc.Addr, "")
	privateDir(t, super)
	alice := testcluster.Token(t, svc.Addr, "alice", "users")

	t.Run("no token", func(t *testing.T) {
		_, err := rawMeta(t, svc.Addr, "").GetFileStatus(ctx, &pb.GetFileStatusRequest{
			Header: &pb.Header{User: testcluster.Superuser()}, Path: "/private/f"})
		wantUnauthenticated(t, "a call without a token naming the superuser", err)
		if !strings.Contains(err.Error(), "strata admin token create") {
			t.Fatalf("the error does not say what to do: %v", err)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("STRATA_USER", testcluster.Superuser())
		t.Setenv("HADOOP_USER_NAME", testcluster.Superuser())
		c, err := client.New(client.Config{Meta: svc.Addr})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.ReadFile(ctx, "/private/f")
		wantUnauthenticated(t, "STRATA_USER and HADOOP_USER_NAME without a token", err)
		c2, err := client.New(client.Config{Meta: svc.Addr, Token: alice})
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		if who, err := c2.WhoAmI(ctx); err != nil || who.GetUser() != "alice" {
			t.Fatalf("with alice's token and STRATA_USER=%s the service took the client for %v (%v)",
				testcluster.Superuser(), who, err)
		}
		_, err = c2.ReadFile(ctx, "/private/f")
		wantDenied(t, "alice's token with STRATA_USER set to the superuser", err)
	})
	t.Run("header", func(t *testing.T) {
		// What Hadoop's user name became in the request header: not believed.
		m := rawMeta(t, svc.Addr, alice)
		h := &pb.Header{User: testcluster.Superuser(), Groups: []string{"supergroup"}, ClientName: "spoof"}
		_, err := m.Open(ctx, &pb.OpenRequest{Header: h, Path: "/private/f"})
		wantDenied(t, "open with alice's token and a header naming the superuser", err)
		_, err = m.Mkdirs(ctx, &pb.MkdirsRequest{Header: h, Path: "/private/x", Permission: 0o755})
		wantDenied(t, "mkdir likewise", err)
		_, err = m.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Header: h, Namespace: &pb.NamespaceInfo{Name: "evil",
			Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + t.TempDir()}})
		wantDenied(t, "create a namespace likewise", err)
		resp, err := m.Batch(ctx, &pb.BatchRequest{Calls: []*pb.BatchCall{{Call: &pb.BatchCall_Open{Open: &pb.OpenRequest{
			Header: h, Path: "/private/f"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		wantDenied(t, "an open in a batch likewise", batchError(t, resp.Results[0]))
	})
	t.Run("forged", func(t *testing.T) {
		tok, err := token.Parse(alice)
		if err != nil {
			t.Fatal(err)
		}
		id := proto.Clone(tok.ID).(*pb.TokenIdentifier)
		id.User, id.Groups = testcluster.Superuser(), nil
		raw, _ := proto.Marshal(id)
		parts := strings.Split(alice, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
		_, err = rawMeta(t, svc.Addr, forged).GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/private/f"})
		wantUnauthenticated(t, "alice's token with the superuser's name in it", err)
		self, err := token.Sign(id, []byte("a key of my own, thirty-two bytes"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = rawMeta(t, svc.Addr, self).GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/private/f"})
		wantUnauthenticated(t, "a token signed with a key of the client's", err)
		_, err = rawMeta(t, svc.Addr, "st1.garbage").Status(ctx, &pb.StatusRequest{})
		wantUnauthenticated(t, "garbage", err)
	})
	t.Run("another cluster", func(t *testing.T) {
		other := testcluster.StartInProcess(t, nil) // same cluster id, its own key
		theirs := testcluster.Token(t, other.Addr, "")
		_, err := rawMeta(t, svc.Addr, theirs).GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/private/f"})
		wantUnauthenticated(t, "the superuser's token of another cluster", err)
	})
	t.Run("revoked", func(t *testing.T) {
		bob := testcluster.Token(t, svc.Addr, "bob")
		bc, err := client.New(client.Config{Meta: svc.Addr, Token: bob})
		if err != nil {
			t.Fatal(err)
		}
		defer bc.Close()
		if _, err := bc.Stat(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		ac, err := client.New(client.Config{Meta: svc.Addr, Token: alice})
		if err != nil {
			t.Fatal(err)
		}
		defer ac.Close()
		_, err = ac.RevokeToken(ctx, 0, bob)
		wantDenied(t, "alice revoking bob's token", err)
		if ok, err := super.RevokeToken(ctx, 0, bob); err != nil || !ok {
			t.Fatalf("revoke: %v %v", ok, err)
		}
		_, err = bc.Stat(ctx, "/")
		wantUnauthenticated(t, "a revoked token", err)
		if ok, err := bc.RevokeToken(ctx, 0, bob); err == nil || ok {
			t.Fatalf("a revoked token revoked itself again: %v %v", ok, err)
		}
	})
}

// TestExpiredTokensAreRefused moves the service's clock past a token's
// expiry, with a renewal in between.
func TestExpiredTokensAreRefused(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).UnixMilli())
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = func() time.Time { return time.UnixMilli(now.Load()) }
	})
	super := testcluster.Client(t, svc.Addr, "")
	r, err := super.CreateToken(ctx, "alice", nil, time.Hour, 3*time.Hour, true)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := client.New(client.Config{Meta: svc.Addr, Token: r.GetToken()})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	stat := func() error { _, err := alice.Stat(ctx, "/"); return err }
	if err := stat(); err != nil {
		t.Fatal(err)
	}
	now.Add((50 * time.Minute).Milliseconds())
	exp, err := alice.RenewToken(ctx, "")
	if err != nil || exp.UnixMilli() != now.Load()+time.Hour.Milliseconds() {
		t.Fatalf("renewed until %v (%v), want an hour from now", exp, err)
	}
	now.Add((30 * time.Minute).Milliseconds()) // past the first expiry, within the renewal
	if err := stat(); err != nil {
		t.Fatalf("a renewed token: %v", err)
	}
	now.Add(time.Hour.Milliseconds())
	err = stat()
	wantUnauthenticated(t, "a token past its renewed expiry", err)
	// What the refusal says to do must work: no renewal, a new token.
	if msg := err.Error(); strings.Contains(msg, "renew it") || !strings.Contains(msg, "strata admin token create") {
		t.Errorf("an expired token's refusal does not say what works: %v", err)
	}
	_, err = alice.RenewToken(ctx, "")
	wantUnauthenticated(t, "renewing an expired token", err)
	if _, err := super.RenewToken(ctx, r.GetToken()); !errors.Is(err, fserr.ErrPermission) {
		t.Fatalf("the superuser renewing an expired token: %v", err)
	}

	short, err := super.CreateToken(ctx, "alice", nil, time.Hour, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := super.RenewToken(ctx, short.GetToken()); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Fatalf("renewing a token that is not renewable: %v", err)
	}
}

// TestModeBitsBindTokenUsers: what a file's mode forbids a token's user,
// the service refuses.
func TestModeBitsBindTokenUsers(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	super := testcluster.Client(t, svc.Addr, "")
	for _, d := range []string{"/home/bob", "/home/alice"} {
		if _, err := super.Mkdirs(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := super.SetOwner(ctx, d, d[len("/home/"):], ""); err != nil {
			t.Fatal(err)
		}
	}
	bob := testcluster.Client(t, svc.Addr, "bob")
	alice := testcluster.Client(t, svc.Addr, "alice")
	if _, err := bob.Mkdirs(ctx, "/home/bob/private", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := bob.WriteFile(ctx, "/home/bob/private/f", []byte("b"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bob.WriteFile(ctx, "/home/bob/mine", []byte("b"), client.CreateOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	if err := bob.SetPermission(ctx, "/home/bob/mine", 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := alice.ReadFile(ctx, "/home/bob/mine")
	wantDenied(t, "alice reads bob's 0600 file", err)
	_, err = alice.ReadDir(ctx, "/home/bob/private")
	wantDenied(t, "alice lists bob's 0700 directory", err)
	_, err = alice.Stat(ctx, "/home/bob/private/f")
	wantDenied(t, "alice stats a file in it", err)
	wantDenied(t, "alice chmods bob's file", alice.SetPermission(ctx, "/home/bob/mine", 0o666))
	_, err = alice.Delete(ctx, "/home/bob/mine", false)
	wantDenied(t, "alice deletes bob's file", err)
	_, err = alice.Rename(ctx, "/home/bob/mine", "/home/alice/mine")
	wantDenied(t, "alice moves bob's file out", err)
	err = alice.WriteFile(ctx, "/home/bob/new", []byte("a"), client.CreateOptions{})
	wantDenied(t, "alice creates a file in bob's home", err)
	if got, err := bob.ReadFile(ctx, "/home/bob/mine"); err != nil || string(got) != "b" {
		t.Fatalf("bob's own read: %q %v", got, err)
	}
}

// TestAdminOperationsNeedTheSuperuser: a user who is not the superuser is
// refused every administrative operation.
func TestAdminOperationsNeedTheSuperuser(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	alice := testcluster.Client(t, svc.Addr, "alice", "users")
	err := alice.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "mine", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK,
		StoreUri: "file://" + t.TempDir()})
	wantDenied(t, "create a namespace", err)
	_, err = alice.DeleteNamespace(ctx, "default", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_NOW)
	wantDenied(t, "delete a namespace", err)
	_, err = alice.AddMember(ctx, 2, "127.0.0.1:1", true)
	wantDenied(t, "add a member", err)
	_, err = alice.RemoveMember(ctx, 1, true)
	wantDenied(t, "remove a member", err)
	wantDenied(t, "transfer leadership", alice.TransferLeader(ctx, 1))
	_, err = alice.CreateToken(ctx, "root", []string{"supergroup"}, 0, 0, true)
	wantDenied(t, "issue a token", err)
	_, err = alice.Resync(ctx, "/")
	wantDenied(t, "resync", err)
	_, err = rawMeta(t, svc.Addr, testcluster.Token(t, svc.Addr, "alice")).Heartbeat(ctx, &pb.HeartbeatRequest{
		Worker: &pb.WorkerInfo{Id: "w-evil", Address: "127.0.0.1:1"}})
	wantDenied(t, "register a worker", err)
	// Loading files into the workers' caches and dropping them: the
	// service hands the block token that allows them (mode cache) to a
	// superuser only, even for a file the user may read.
	super := testcluster.Client(t, svc.Addr, testcluster.Superuser())
	if err := super.WriteFile(ctx, "/public", []byte("for all"), client.CreateOptions{Perm: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ReadFile(ctx, "/public"); err != nil {
		t.Fatalf("alice reads /public: %v", err)
	}
	_, err = alice.LoadFile(ctx, "/public")
	wantDenied(t, "load a file into the caches", err)
	_, err = alice.UncacheFile(ctx, "/public")
	wantDenied(t, "drop a file from the caches", err)
	if _, err := super.LoadFile(ctx, "/public"); err != nil {
		t.Fatalf("the superuser's load: %v", err)
	}
	// A member of the supergroup is a superuser.
	ops := testcluster.Client(t, svc.Addr, "ops", "supergroup")
	if _, err := ops.CreateToken(ctx, "bob", nil, 0, 0, true); err != nil {
		t.Fatalf("a supergroup member's token: %v", err)
	}
}

// TestAuthenticationOffBelievesTheHeader: --insecure-no-auth is HDFS's
// simple authentication, on request only.
func TestAuthenticationOffBelievesTheHeader(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) { cfg.NoAuth = true })
	c, err := client.New(client.Config{Meta: svc.Addr, User: "mallory", Groups: []string{"supergroup"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Mkdirs(ctx, "/m", 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := c.Stat(ctx, "/m")
	if err != nil || st.Owner != "mallory" {
		t.Fatalf("with authentication off, /m is %v's (%v)", st, err)
	}
}
