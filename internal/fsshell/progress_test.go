package fsshell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bars makes c's shell draw bars for transfers of min bytes or more on a
// stderr it believes to be a terminal when tty is set.
func bars(c *caller, tty bool, min int64) {
	c.setup = func(sh *shell) {
		sh.isTerminal = func(io.Writer) bool { return tty }
		sh.progressMin = min
	}
}

// A large transfer to a terminal draws a bar on stderr and erases it; a
// small one, or one whose stderr is not a terminal, draws nothing; stdout
// never carries a bar.
func TestProgressBar(t *testing.T) {
	e := newDataEnv(t)
	data := randomBytes(3, 3*testBlockSize)
	local := writeTemp(t, data)
	out := filepath.Join(t.TempDir(), "out")
	c := e.as(e.super)
	for _, args := range [][]string{
		{"-put", local, "/big"}, {"-cp", "/big", "/copy"}, {"-get", "/copy", out}, {"-copyToLocal", "-f", "/big", out},
	} {
		bars(c, true, testBlockSize)
		r := c.run(args...)
		label := args[len(args)-2]
		if r.code != 0 || r.out != "" || !strings.Contains(r.err, label) || !strings.Contains(r.err, "3.0 MiB") {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.err)
		}
		if last := r.err[strings.LastIndex(r.err, "\r\x20")+1:]; strings.TrimSpace(last) != "" || !strings.HasSuffix(last, "\r") {
			t.Fatalf("%q: the bar is not erased: %q", args, r.err)
		}
		bars(c, false, testBlockSize) // no terminal
		c.expect(t, 0, "", "", append([]string{args[0], "-f"}, args[1:]...)...)
		bars(c, true, int64(len(data))+1) // too small
		c.expect(t, 0, "", "", append([]string{args[0], "-f"}, args[1:]...)...)
	}
	if shaFile(t, out) != sha(data) {
		t.Fatal("-get with a bar: content differs")
	}
	bars(c, true, 1) // -cat and -tail never draw one
	c.expect(t, 0, "hello", "", "-cat", "-ignoreCrc", writeRemote(t, e, "/hello", "hello"))
	c.expect(t, 0, "hello", "", "-tail", "/hello")
}

func writeRemote(t *testing.T, e *env, path, content string) string {
	t.Helper()
	c := e.as(e.super)
	c.stdin = strings.NewReader(content)
	c.expect(t, 0, "", "", "-put", "-", path)
	return path
}

// A failed transfer erases its bar before the error is shown.
func TestProgressBarOnFailure(t *testing.T) {
	var errb bytes.Buffer
	sh := newShell(context.Background(), io.Discard, &errb, nil)
	sh.isTerminal = func(io.Writer) bool { return true }
	sh.progressMin = 10
	src := io.MultiReader(strings.NewReader("0123456789"), failing{})
	n, err := sh.transfer(io.Discard, src, 100, "label")
	if re := (*readError)(nil); n != 10 || !errors.As(err, &re) {
		t.Fatalf("transfer: %d, %v", n, err)
	}
	s := errb.String()
	if !strings.Contains(s, "label") || !strings.HasSuffix(s, "\r") || strings.TrimSpace(s[strings.LastIndex(s, "\r\x20"):]) != "" {
		t.Fatalf("stderr %q", s)
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }

// The defaults: bars only on a terminal, and none when STRATA_NO_PROGRESS
// is set.
func TestProgressDefaults(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a file or a buffer taken for a terminal")
	}
	if sh := newShell(context.Background(), io.Discard, io.Discard, nil); sh.progressMin != defaultProgressMin {
		t.Fatalf("progressMin %d", sh.progressMin)
	}
	t.Setenv(noProgressEnv, "1")
	sh := newShell(context.Background(), io.Discard, io.Discard, nil)
	sh.isTerminal = func(io.Writer) bool { return true }
	if sh.progressBar(1<<40, "x") != nil {
		t.Fatal("a bar despite " + noProgressEnv)
	}
}
