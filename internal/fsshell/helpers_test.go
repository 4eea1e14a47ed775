package fsshell

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// env is a real namespace service, in the test's process, on loopback.
type env struct {
	t     *testing.T
	srv   *testcluster.InProcess
	addr  string
	super string // the OS user running the test, the service's superuser
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with the service's configuration adjusted by edit.
func newEnvWith(t *testing.T, edit func(*metaserver.Config)) *env {
	t.Helper()
	srv := testcluster.StartInProcess(t, edit)
	return &env{t: t, srv: srv, addr: srv.Addr, super: testcluster.Superuser()}
}

// namespace creates another namespace.
func (e *env) namespace(name string) {
	e.t.Helper()
	err := e.srv.Member.EnsureNamespace(context.Background(), &pb.NamespaceInfo{Name: name,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + e.t.TempDir()})
	if err != nil {
		e.t.Fatal(err)
	}
}

// result is what one command line printed and returned.
type result struct {
	out, err string
	code     int
}

// caller runs command lines as one user.
type caller struct {
	e      *env
	user   string
	groups []string
	stdin  io.Reader
	setup  func(*shell) // adjusts the shell before the command runs
}

func (e *env) as(user string, groups ...string) *caller {
	return &caller{e: e, user: user, groups: groups}
}

// run runs one command line; dates print in UTC.
func (c *caller) run(args ...string) result {
	var out, errb bytes.Buffer
	sh := newShell(context.Background(), &out, &errb, func() (*client.Client, error) {
		return client.New(client.Config{Meta: c.e.addr, Token: testcluster.Token(c.e.t, c.e.addr, c.user, c.groups...)})
	})
	sh.loc = time.UTC
	if c.stdin != nil {
		sh.stdin = c.stdin
	}
	if c.setup != nil {
		c.setup(sh)
	}
	code := sh.run(args)
	sh.close()
	return result{out: out.String(), err: errb.String(), code: code}
}

// ok runs a command line as the superuser and fails the test unless it
// succeeds without a diagnostic.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	r := e.as(e.super).run(args...)
	if r.code != 0 || r.err != "" {
		e.t.Fatalf("%q: exit %d\n%s", args, r.code, r.err)
	}
	return r.out
}

// expect runs a command line as c's user and checks its exit status and
// output; where the expected output has DATE, the output has every
// "yyyy-MM-dd HH:mm" date replaced by DATE.
func (c *caller) expect(t *testing.T, code int, stdout, stderr string, args ...string) {
	t.Helper()
	r := c.run(args...)
	if strings.Contains(stdout, "DATE") {
		r.out = dates(r.out)
	}
	if r.code != code || r.out != stdout || r.err != stderr {
		t.Fatalf("%q as %s:\nexit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s",
			args, c.user, r.code, code, r.out, stdout, r.err, stderr)
	}
}

func (e *env) expect(code int, stdout, stderr string, args ...string) {
	e.t.Helper()
	e.as(e.super).expect(e.t, code, stdout, stderr, args...)
}

var dateRE = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`)

func dates(s string) string { return dateRE.ReplaceAllString(s, "DATE") }

// lines joins lines with a newline after each.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
