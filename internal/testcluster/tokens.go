package testcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/token"
)

// Tokens for tests (docs/security.md): every service started here is
// known with its superuser's token, by address, and Token issues tokens for
// other users with it. The one helper every test goes through.

var admins struct {
	sync.Mutex
	token map[string]string // by service address
	dir   map[string]string // where a process writes its token, by address
}

func registerAdmin(tok string, addrs ...string) {
	admins.Lock()
	defer admins.Unlock()
	if admins.token == nil {
		admins.token = map[string]string{}
	}
	for _, a := range addrs {
		admins.token[a] = tok
	}
}

// registerAdminDir records that the process serving at addr writes its
// superuser's token to dataDir/token (strata meta's leader, the dev
// server). A token known for addr was an earlier service's, which served
// on the same port: it is forgotten.
func registerAdminDir(dataDir, addr string) {
	admins.Lock()
	defer admins.Unlock()
	if admins.dir == nil {
		admins.dir = map[string]string{}
	}
	admins.dir[addr] = dataDir
	delete(admins.token, addr)
}

// AdminToken returns the superuser's token of the service at addr (one
// member's address or all of them, comma-separated), which a test started.
func AdminToken(t testing.TB, addr string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		tok, dirs := lookupAdmin(addr)
		if tok != "" {
			return tok
		}
		for _, d := range dirs {
			if b, err := os.ReadFile(filepath.Join(d, "token")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				tok = strings.TrimSpace(string(b))
				registerAdmin(tok, strings.Split(addr, ",")...)
				return tok
			}
		}
		if len(dirs) == 0 || time.Now().After(deadline) {
			t.Fatalf("testcluster: no superuser's token for the service at %s (was it started by testcluster?)", addr)
		}
		time.Sleep(10 * time.Millisecond) // the leader writes its token as it takes over
	}
}

func lookupAdmin(addr string) (string, []string) {
	admins.Lock()
	defer admins.Unlock()
	var dirs []string
	for _, a := range strings.Split(addr, ",") {
		if tok := admins.token[a]; tok != "" {
			return tok, nil
		}
		if d := admins.dir[a]; d != "" {
			dirs = append(dirs, d)
		}
	}
	return "", dirs
}

// Token returns a token of user (the superuser if empty) in groups for the
// service at addr, issued by its superuser.
func Token(t testing.TB, addr, user string, groups ...string) string {
	t.Helper()
	admin := AdminToken(t, addr)
	if user == "" || (user == Superuser() && len(groups) == 0) {
		return admin
	}
	c, err := client.New(client.Config{Meta: addr, Token: admin})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.CreateToken(context.Background(), user, groups, 0, 0, true)
	if err != nil {
		t.Fatalf("testcluster: a token for %s: %v", user, err)
	}
	return r.GetToken()
}

// Context returns a context whose calls to the service's handlers, made
// directly in the test's process, carry a token of user (the superuser if
// empty) in groups, as a gRPC call would.
func (p *InProcess) Context(t testing.TB, user string, groups ...string) context.Context {
	t.Helper()
	return TokenContext(context.Background(), Token(t, p.Addr, user, groups...))
}

// TokenContext returns ctx carrying tok as a gRPC call's incoming metadata.
func TokenContext(ctx context.Context, tok string) context.Context {
	return metadata.NewIncomingContext(ctx, metadata.Pairs(token.MetadataKey, token.Bearer+tok))
}

// groupAdminToken returns a superuser's token of an in-process group,
// issued by whichever member leads.
func groupAdminToken(ctx context.Context, t testing.TB, members []*InProcess) string {
	t.Helper()
	for {
		for _, m := range members {
			if tok, err := m.Member.IssueToken(ctx, Superuser(), nil, 0); err == nil {
				return tok
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testcluster: no member issued a token: %v", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// CLIEnv returns the environment a `strata` command line of a test runs
// with, besides the test's own: STRATA_TOKEN, the superuser's token of the
// service the command names (--meta, else $STRATA_META in env) if a test
// started it, and a HOME of its own, so that no token of the machine's user
// (~/.strata/token) is ever used.
func CLIEnv(t testing.TB, args, env []string) []string {
	t.Helper()
	meta := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "STRATA_META="); ok {
			meta = v
		}
	}
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--meta="); ok {
			meta = v
		} else if a == "--meta" && i+1 < len(args) {
			meta = args[i+1]
		}
	}
	out := []string{"HOME=" + t.TempDir()}
	if tok, dirs := lookupAdmin(meta); tok != "" || len(dirs) > 0 {
		out = append(out, token.EnvVar+"="+AdminToken(t, meta))
	}
	return out
}
