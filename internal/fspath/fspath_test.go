package fspath_test

import (
	"bufio"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
)

// cases reads a table of testdata: each line's first field and the Go
// string literal after it.
func cases(t *testing.T, file string) [][2]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		first, rest, _ := strings.Cut(line, " ")
		out = append(out, [2]string{first, strings.TrimSpace(rest)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func unquote(t *testing.T, s string) string {
	t.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		t.Fatalf("bad literal %s: %v", s, err)
	}
	return u
}

func TestTheTable(t *testing.T) {
	for _, c := range cases(t, "testdata/paths.txt") {
		verdict, p := c[0], unquote(t, c[1])
		_, lookupErr := fspath.Split(p)
		_, newErr := fspath.SplitNew(p)
		got := "new"
		switch {
		case lookupErr != nil:
			got = "invalid"
		case newErr != nil:
			got = "lookup"
		}
		if got != verdict {
			t.Errorf("%q: %s (Split: %v; SplitNew: %v), want %s", p, got, lookupErr, newErr, verdict)
		}
		for _, err := range []error{lookupErr, newErr} {
			if err != nil && (!errors.Is(err, fserr.ErrInvalidPath) || fspath.Reason(err) == "") {
				t.Errorf("%q: error %v is not an invalid path with a reason", p, err)
			}
		}
	}
}

func TestLimits(t *testing.T) {
	long := strings.Repeat("n", fspath.MaxNameLen)
	deep := strings.Repeat("/d", fspath.MaxDepth)
	// 8000 bytes exactly: 888 components of 8 bytes, then one of 7.
	longest := strings.Repeat("/abcdefgh", 888) + "/abcdefg"
	for _, p := range []string{"/" + long, deep, longest} {
		if _, err := fspath.SplitNew(p); err != nil {
			t.Errorf("%.30q...: %v", p, err)
		}
	}
	for _, p := range []string{"/" + long + "n", deep + "/d", longest + "h"} {
		if _, err := fspath.Split(p); !errors.Is(err, fserr.ErrInvalidPath) {
			t.Errorf("%.30q...: %v, want an invalid path", p, err)
		}
	}
}

func TestReasonsSayTheRule(t *testing.T) {
	for p, want := range map[string]string{
		"/a//b":       "a name is empty (two slashes in a row)",
		"/a/..":       `".." is not allowed as a name`,
		"/bad\xffx":   `the name "bad\xffx" is not valid UTF-8`,
		"relative":    `"relative" is not an absolute path`,
		"/a:b":        `the name "a:b" holds ':', which a name may not hold (as in HDFS)`,
		"/nl\nx":      `the name "nl\nx" holds the control character U+000A, which a name may not hold`,
		"/ok/ctl\x01": `the name "ctl\x01" holds the control character U+0001, which a name may not hold`,
	} {
		_, err := fspath.SplitNew(p)
		if got := fspath.Reason(err); got != want {
			t.Errorf("%q: reason %q, want %q", p, got, want)
		}
		// The reason survives the trip through a message, as over gRPC.
		wire := errors.New("mkdirs " + p + ": " + err.Error())
		if got := fspath.Reason(wire); got != want {
			t.Errorf("%q over the wire: reason %q, want %q", p, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, c := range cases(t, "testdata/clean.txt") {
		in := unquote(t, c[0])
		got, err := fspath.Clean(in)
		if c[1] == "error" {
			if !errors.Is(err, fserr.ErrInvalidPath) {
				t.Errorf("Clean(%q) = %q, %v; want an invalid path", in, got, err)
			}
			continue
		}
		if want := unquote(t, c[1]); got != want || err != nil {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// validPath is Split's contract, spelled out independently.
func validPath(p string) bool {
	if !strings.HasPrefix(p, "/") || len(p) > fspath.MaxPathLen {
		return false
	}
	if p == "/" || p == "//" {
		return true
	}
	parts := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	if len(parts) > fspath.MaxDepth {
		return false
	}
	for _, c := range parts {
		if c == "" || c == "." || c == ".." || len(c) > fspath.MaxNameLen || strings.ContainsRune(c, 0) ||
			strings.ToValidUTF8(c, "") != c {
			return false
		}
	}
	return true
}

func FuzzSplit(f *testing.F) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a/b/c", "a/b", "/a//b", "/./a", "/a/..", "/a\x00b",
		"/a:b", "/nl\nx", "/\xff", "/" + strings.Repeat("x", 256), strings.Repeat("/d", 1001)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		parts, err := fspath.Split(p)
		if want := validPath(p); (err == nil) != want {
			t.Fatalf("Split(%q): %v, valid %v", p, err, want)
		}
		if err != nil {
			if !errors.Is(err, fserr.ErrInvalidPath) {
				t.Fatalf("Split(%q): unexpected error %v", p, err)
			}
			return
		}
		joined := "/" + strings.Join(parts, "/")
		if joined != p && joined+"/" != p && p != "//" {
			t.Fatalf("Split(%q) joins back as %q", p, joined)
		}
		if again, err := fspath.Split(joined); err != nil || !slices.Equal(again, parts) {
			t.Fatalf("Split(%q) = %q, %v; want %q", joined, again, err, parts)
		}
		// Clean leaves a valid path as it is, but for its trailing slash.
		if c, err := fspath.Clean(p); err != nil || c != joined {
			t.Fatalf("Clean(%q) = %q, %v; want %q", p, c, err, joined)
		}
	})
}
