package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// These tests run the strata binary as a user does, against a real
// `strata server --dev` where they need one, and check what it prints and
// its exit status.

// ran is what one run of the binary printed and returned.
type ran struct {
	out, err string
	code     int
}

// strata runs the binary with args and env (added to the test's), with
// stdin if not nil, and fails the test unless it returns within limit:
// that is how the tests bound how long a command may take.
func strata(t *testing.T, limit time.Duration, env []string, stdin io.Reader, args ...string) ran {
	t.Helper()
	cmd := command(t, env, args...)
	cmd.Stdin = stdin
	return finish(t, cmd, limit)
}

// command is the binary's command line args with env added.
func command(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testcluster.Binary(t), args...)
	cmd.Env = append(cmd.Environ(), "STRATA_NO_PROGRESS=1", "STRATA_PLAINTEXT=1")
	cmd.Env = append(cmd.Env, testcluster.CLIEnv(t, args, env)...)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// finish runs cmd, started or not, until it returns or limit passes (then
// it is killed and the test fails), and checks that it printed nothing of
// gRPC's.
func finish(t *testing.T, cmd *exec.Cmd, limit time.Duration) ran {
	t.Helper()
	var out, errb bytes.Buffer
	if cmd.Process == nil {
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("strata %q did not return within %v\nstderr: %s", cmd.Args[1:], limit, errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("strata %q: %v", cmd.Args[1:], err)
	}
	if s, ok := cmd.Stderr.(*bytes.Buffer); ok {
		errb = *s
	}
	if s, ok := cmd.Stdout.(*bytes.Buffer); ok {
		out = *s
	}
	r := ran{out: out.String(), err: errb.String(), code: cmd.ProcessState.ExitCode()}
	for _, raw := range []string{"rpc error", "Internal:", "Unavailable:", "desc = "} {
		if strings.Contains(r.out+r.err, raw) {
			t.Errorf("strata %q printed gRPC's words %q:\n%s%s", cmd.Args[1:], raw, r.out, r.err)
		}
	}
	return r
}

func (r ran) expect(t *testing.T, code int, stderr string, args ...string) {
	t.Helper()
	if r.code != code || r.err != stderr {
		t.Errorf("strata %q: exit %d, want %d\nstderr: %q\nwant:   %q", args, r.code, code, r.err, stderr)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentPort returns a loopback address that accepts connections and
// never says a word: no gRPC server behind it.
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return l.Addr().String()
}

// A service that cannot be reached is said to be so, naming the address
// and the cause, well within 10 s (by default within about 3 s).
func TestUnreachableServiceFailsFast(t *testing.T) {
	refused := closedPort(t)
	for _, c := range []struct {
		args   []string
		env    []string
		code   int
		stderr string
	}{
		{[]string{"fs", "--meta", refused, "-ls", "/"}, nil, 1,
			"ls: cannot reach the namespace service at " + refused + ": connection refused\n"},
		{[]string{"fs", "-ls", "/a", "/b", "/c"}, []string{"STRATA_META=" + refused}, 1,
			"ls: cannot reach the namespace service at " + refused + ": connection refused\n"},
		{[]string{"fs", "--meta", "nosuchhost.invalid:7700", "-mkdir", "/x"}, nil, 1,
			"mkdir: cannot reach the namespace service at nosuchhost.invalid:7700: no such host\n"},
		{[]string{"fs", "--meta", refused + ",nosuchhost.invalid:7700", "-ls", "/"}, nil, 1,
			"ls: cannot reach the namespace service at any of its members: " + refused +
				" (connection refused), nosuchhost.invalid:7700 (no such host)\n"},
		{[]string{"admin", "ns", "list", "--meta", refused}, nil, 1,
			"strata: cannot reach the namespace service at " + refused + ": connection refused\n"},
	} {
		strata(t, 10*time.Second, c.env, nil, c.args...).expect(t, c.code, c.stderr, c.args...)
	}
}

// --timeout, else $STRATA_TIMEOUT, sets the wait for a first connection:
// the message says how long a service that answers nothing was waited for.
func TestTimeoutSetsTheWait(t *testing.T) {
	silent := silentPort(t)
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"fs", "--meta", silent, "-ls", "/"}, nil, "within 3s"},
		{[]string{"fs", "--meta", silent, "--timeout", "1500ms", "-ls", "/"}, []string{"STRATA_TIMEOUT=9s"}, "within 1.5s"},
		{[]string{"fs", "--meta", silent, "-ls", "/"}, []string{"STRATA_TIMEOUT=2"}, "within 2s"},
		{[]string{"admin", "ns", "list", "--meta", silent, "--timeout", "1s"}, nil, "within 1s"},
	} {
		r := strata(t, 10*time.Second, c.env, nil, c.args...)
		want := "cannot reach the namespace service at " + silent +
			": it accepts connections but did not answer as a Strata service " + c.want + "\n"
		if r.code != 1 || !strings.HasSuffix(r.err, want) {
			t.Errorf("strata %q (%q): exit %d, stderr %q; want 1 and %q", c.args, c.env, r.code, r.err, want)
		}
	}
}

// A malformed address or timeout is a usage error at once: 255 in strata
// fs (Hadoop's status), 2 in the other commands, as for their other usage
// errors.
func TestMalformedSettingsAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args   []string
		env    []string
		code   int
		stderr string
	}{
		{[]string{"fs", "--meta", "garbage", "-ls", "/"}, nil, 255,
			"fs: namespace service address \"garbage\": missing port in address (want HOST:PORT)\n"},
		{[]string{"fs", "-ls", "/"}, []string{"STRATA_META=127.0.0.1:70000"}, 255,
			"fs: $STRATA_META: namespace service address \"127.0.0.1:70000\": port \"70000\" is not a number from 1 to 65535\n"},
		{[]string{"fs", "--timeout", "soon", "-ls", "/"}, nil, 255,
			"fs: timeout \"soon\" is not a duration such as 10s or 1m\n"},
		{[]string{"admin", "ns", "list", "--meta", "garbage"}, nil, 2,
			"strata: namespace service address \"garbage\": missing port in address (want HOST:PORT)\n"},
		{[]string{"worker", "--meta", "127.0.0.1:7700,127.0.0.1:7701:7702"}, nil, 2,
			"strata: namespace service address \"127.0.0.1:7701:7702\": too many colons in address (want HOST:PORT)\n"},
		{[]string{"worker"}, []string{"STRATA_META=127.0.0.1:7700,garbage"}, 2,
			"strata: $STRATA_META: namespace service address \"garbage\": missing port in address (want HOST:PORT)\n"},
		{[]string{"worker", "--meta", "127.0.0.1:7700", "--read-ahead", "0"}, nil, 2,
			"strata: --read-ahead \"0\": want a positive size, such as 16MiB\n"},
		{[]string{"worker", "--meta", "127.0.0.1:7700", "--read-ahead-in-flight", "lots"}, nil, 2,
			"strata: --read-ahead-in-flight \"lots\": want a positive size, such as 16MiB\n"},
		{[]string{"admin", "status"}, []string{"STRATA_TIMEOUT=-1s"}, 2,
			"strata: $STRATA_TIMEOUT: timeout \"-1s\" is not positive\n"},
		{[]string{"admin", "ns", "list", "--bogus"}, nil, 2, "strata: unknown flag: --bogus\n"},
		{[]string{"admin", "ns", "delete"}, nil, 2, "strata: accepts 1 arg(s), received 0\n"},
		{[]string{"bogus"}, nil, 2, "strata: unknown command \"bogus\" for \"strata\"\n"},
		// Issue 32: names no user can have, and a ttl past the max lifetime.
		{[]string{"admin", "token", "create", "--user", "root\nx"}, nil, 2,
			"strata: --user: not a valid user or group name: \"root\\nx\" has white space at byte 4\n"},
		{[]string{"admin", "token", "create", "--user", "ali ce"}, nil, 2,
			"strata: --user: not a valid user or group name: \"ali ce\" has white space at byte 3\n"},
		{[]string{"admin", "token", "create", "--user", "alice", "--groups", "users,two words"}, nil, 2,
			"strata: --groups: not a valid user or group name: \"two words\" has white space at byte 3\n"},
		{[]string{"admin", "token", "create", "--user", "alice", "--ttl", "2000000h"}, nil, 2,
			"strata: --ttl and --max-lifetime: invalid token lifetime: a ttl of 2000000h0m0s is longer than the " +
				"max lifetime, 168h0m0s, past which no token is valid\n"},
	} {
		strata(t, 10*time.Second, c.env, nil, c.args...).expect(t, c.code, c.stderr, c.args...)
	}
}

// The path rule, as a user meets it (docs/semantics.md, "Paths").
func TestPathsAsAUserTypesThem(t *testing.T) {
	env := []string{"STRATA_META=" + testcluster.StartDev(t, t.TempDir()).Addr}
	run := func(code int, stdout, stderr string, args ...string) {
		t.Helper()
		r := strata(t, 30*time.Second, env, nil, append([]string{"fs"}, args...)...)
		if r.code != code || r.out != stdout || r.err != stderr {
			t.Errorf("%q: exit %d, want %d\nstdout: %q\nwant:   %q\nstderr: %q\nwant:   %q",
				args, r.code, code, r.out, stdout, r.err, stderr)
		}
	}
	run(1, "", "touchz: `/bad?name': Invalid path name: the name \"bad\\xffname\" is not valid UTF-8\n", "-touchz", "/bad\xffname")
	run(0, "", "", "-mkdir", "-p", "//dbl//slash")
	run(0, "/dbl\n/dbl/slash\n", "", "-ls", "-C", "-R", "/")
	run(1, "", "ls: `/..': Invalid path name: \"..\" goes above the root\n", "-ls", "/..")
	run(1, "", "mkdir: `/a:b': Invalid path name: the name \"a:b\" holds ':', which a name may not hold (as in HDFS)\n",
		"-mkdir", "/a:b")
	run(1, "", "touchz: `/nl?x': Invalid path name: the name \"nl\\nx\" holds the control character U+000A, which a name may not hold\n",
		"-touchz", "/nl\nx")
	run(0, "/dbl\n", "", "-ls", "-C", "/")
}

// A service that dies in the middle of a put is reported in words, naming
// what failed, without gRPC's.
func TestServiceDyingMidPut(t *testing.T) {
	p := testcluster.StartDev(t, t.TempDir())
	cmd := command(t, []string{"STRATA_META=" + p.Addr}, "fs", "-put", "-", "/big")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	feed, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 4<<20)
	// Once the put has read this much it streams to the worker: past the
	// inline limit, and the pipe holds far less.
	if _, err := feed.Write(chunk); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	_, _ = feed.Write(chunk) // the put may have given up already
	feed.Close()
	r := finish(t, cmd, 60*time.Second)
	want := regexp.MustCompile(`^put: write /big\._COPYING_: worker at 127\.0\.0\.1:\d+: ` +
		`(connection refused|connection reset by peer|the connection was closed|broken pipe)\n$`)
	if r.code != 1 || !want.MatchString(r.err) {
		t.Fatalf("exit %d, stderr %q; want 1 and %v", r.code, r.err, want)
	}
}

// -appendToFile appends, and says so in its help.
func TestAppendToFile(t *testing.T) {
	help := strata(t, 10*time.Second, nil, nil, "fs", "-help", "appendToFile")
	if help.code != 0 || !strings.Contains(help.out, "will be created if it does not exist") ||
		strings.Contains(help.out, "data path") || strings.Contains(help.out, "NOT SUPPORTED") {
		t.Errorf("-help appendToFile: exit %d\n%s", help.code, help.out)
	}
	env := []string{"STRATA_META=" + testcluster.StartDev(t, t.TempDir()).Addr}
	strata(t, 30*time.Second, env, strings.NewReader("old"), "fs", "-put", "-", "/f").expect(t, 0, "")
	local := t.TempDir() + "/more"
	if err := os.WriteFile(local, []byte("more"), 0o644); err != nil {
		t.Fatal(err)
	}
	strata(t, 30*time.Second, env, nil, "fs", "-appendToFile", local, "/f").expect(t, 0, "")
	if r := strata(t, 30*time.Second, env, nil, "fs", "-cat", "/f"); r.out != "oldmore" {
		t.Errorf("after -appendToFile, /f holds %q", r.out)
	}
}

// `strata version` and `strata --version` say what the binary is.
func TestVersion(t *testing.T) {
	r := strata(t, 10*time.Second, nil, nil, "version")
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	if r.code != 0 || r.err != "" || len(lines) < 3 || lines[0] != "strata dev" ||
		!strings.HasPrefix(lines[1], "revision: ") ||
		lines[len(lines)-1] != "go: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("strata version: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if flag := strata(t, 10*time.Second, nil, nil, "--version"); flag.code != 0 || flag.out != r.out {
		t.Errorf("strata --version: exit %d\n%s\nwant\n%s", flag.code, flag.out, r.out)
	}
}
