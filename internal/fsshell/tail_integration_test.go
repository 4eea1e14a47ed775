package fsshell

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

func TestTail(t *testing.T) {
	e := newDataEnv(t)
	data := randomBytes(1, 3000)
	put := func(path string, b []byte) {
		c := e.as(e.super)
		c.stdin = strings.NewReader(string(b))
		c.expect(t, 0, "", "", "-put", "-f", "-", path)
	}
	put("/t", data)
	put("/small", []byte("short\n"))
	e.ok("-mkdir", "-p", "/d", "/user/"+e.super)
	e.expect(0, string(data[3000-1024:]), "", "-tail", "/t")
	e.expect(0, "short\n", "", "-tail", "strata:///small")
	e.ok("-cp", "/small", "rel")
	e.expect(0, "short\n", "", "-tail", "rel")
	e.expect(0, "short\n", "", "-tail", "-s", "nonsense", "/small") // -s counts only with -f
	e.expect(1, "", lines("tail: `/d': Is a directory"), "-tail", "/d")
	e.expect(1, "", lines("tail: `/nope': No such file or directory"), "-tail", "/nope")
	e.expect(1, "", lines("tail: `/sm*': No such file or directory"), "-tail", "/sm*") // not a pattern
	for _, c := range []struct {
		args  []string
		first string
	}{
		{[]string{"-tail", "/t", "/small"}, "-tail: Too many arguments: expected 1 but got 2"},
		{[]string{"-tail"}, "-tail: Not enough arguments: expected 1 but got 0"},
		{[]string{"-tail", "-f", "-s", "1s", "/t"}, `-tail: For input string: "1s"`},
		{[]string{"-tail", "-f", "-s", "-5", "/t"}, "-tail: timeout value is negative"},
		{[]string{"-tail", "-f", "/t", "-s"}, "-tail: option -s requires 1 argument."},
	} {
		if r := e.as(e.super).run(c.args...); r.code != 255 || r.out != "" || firstLine(r.err) != c.first+"\n" {
			t.Errorf("%q: %+v", c.args, r)
		}
	}
}

// -tail -f shows what is past the last position each time it looks: a
// longer file replacing it shows its new part, a shorter one moves the
// position back without printing. The pauses are the test's: each checks
// what was shown (and flushed) so far, replaces the file, and the last one
// ends the command as an interrupt would.
func TestTailFollow(t *testing.T) {
	e := newDataEnv(t)
	fs := testcluster.Client(t, e.addr, "")
	content := randomBytes(2, 6000)
	writeFile(t, fs, "/f", content[:1000])
	steps := []struct {
		shown string // all that was shown when the pause starts
		next  int    // the length of the file that then replaces it
	}{
		{string(content[:1000]), 1500},
		{string(content[:1500]), 5000},
		{string(content[:5000]), 4000},
		{string(content[:5000]), 4010},
		{string(content[:5000]) + string(content[4000:4010]), -1},
	}
	var out strings.Builder
	pauses := 0
	c := e.as(e.super)
	c.setup = func(sh *shell) {
		sh.out.Reset(&out) // to see what is flushed at each pause
		sh.pause = func(ctx context.Context, d time.Duration) error {
			step := steps[pauses]
			pauses++
			if d != 250*time.Millisecond || out.String() != step.shown {
				t.Errorf("pause %d of %v: %d bytes shown, want %d", pauses, d, out.Len(), len(step.shown))
			}
			if step.next < 0 {
				return context.Canceled
			}
			writeFile(t, fs, "/f", content[:step.next])
			return nil
		}
	}
	r := c.run("-tail", "-f", "-s", "250", "/f")
	if r.code != 0 || r.err != "" || pauses != len(steps) {
		t.Fatalf("-tail -f: exit %d, %d pauses, stderr %q", r.code, pauses, r.err)
	}
	// A file that disappears ends it with an error.
	c.setup = func(sh *shell) {
		sh.pause = func(context.Context, time.Duration) error {
			_, err := fs.Delete(context.Background(), "/f", false)
			return err
		}
	}
	c.expect(t, 1, string(content[4010-1024:4010]), lines("tail: `/f': No such file or directory"), "-tail", "-f", "/f")
}

// -tail -f -s 0 waits the shortest pause between its looks, not none: a
// look is a call to the service, which a loop without pauses kept busy.
func TestTailFollowPausesAtLeastTheMinimum(t *testing.T) {
	e := newDataEnv(t)
	writeFile(t, testcluster.Client(t, e.addr, ""), "/f", []byte("x\n"))
	for _, s := range []string{"0", "1", "99"} {
		var pauses []time.Duration
		c := e.as(e.super)
		c.setup = func(sh *shell) {
			sh.pause = func(_ context.Context, d time.Duration) error {
				if pauses = append(pauses, d); len(pauses) == 3 {
					return context.Canceled
				}
				return nil
			}
		}
		c.expect(t, 0, "x\n", "", "-tail", "-f", "-s", s, "/f")
		for i, d := range pauses {
			if d != minFollowDelay {
				t.Errorf("-s %s: pause %d of %v, want %v", s, i+1, d, minFollowDelay)
			}
		}
	}
}

func writeFile(t *testing.T, fs *client.Client, path string, data []byte) {
	t.Helper()
	if err := fs.WriteFile(context.Background(), path, data, client.CreateOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
}
