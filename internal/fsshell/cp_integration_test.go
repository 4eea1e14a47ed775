package fsshell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// srcTree puts a local tree at /src: files of every kind of size, an empty
// directory, and nesting.
func srcTree(t *testing.T, e *env) map[string][]byte {
	t.Helper()
	local := filepath.Join(t.TempDir(), "src")
	files := map[string][]byte{}
	for i, f := range []struct {
		name string
		size int
	}{{"a", 0}, {"b", 100}, {"sub/c", 4097}, {"sub/deep/d", 2*testBlockSize + 1}, {"sub/deep/e", 1}} {
		files[f.name] = writeRandom(t, filepath.Join(local, f.name), uint64(100+i), f.size)
	}
	if err := os.MkdirAll(filepath.Join(local, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.ok("-put", local, "/")
	return files
}

// sameTree checks that dir holds srcTree's files and layout.
func sameTree(t *testing.T, e *env, dir string, files map[string][]byte) {
	t.Helper()
	want := e.ok("-stat", "-R", "%n %F %b", "/src")
	if got := e.ok("-stat", "-R", "%n %F %b", dir); got[len(firstLine(got)):] != want[len(firstLine(want)):] {
		t.Fatalf("%s:\n%s\nwant:\n%s", dir, got, want)
	}
	for name, data := range files {
		if got := e.ok("-cat", dir+"/"+name); sha([]byte(got)) != sha(data) {
			t.Fatalf("%s/%s: content differs", dir, name)
		}
	}
}

func firstLine(s string) string {
	for i := range s {
		if s[i] == '\n' {
			return s[:i+1]
		}
	}
	return s
}

// -cp copies trees: to a new name, into an existing directory, from several
// sources, across namespaces, and never leaves a ._COPYING_ behind.
func TestCpTree(t *testing.T) {
	e := newDataEnv(t)
	files := srcTree(t, e)
	e.expect(0, "", "", "-cp", "/src", "/dst")
	sameTree(t, e, "/dst", files)
	e.expect(0, "", "", "-cp", "/src", "/dst") // now into /dst, as Hadoop does
	sameTree(t, e, "/dst/src", files)
	e.ok("-mkdir", "/multi")
	e.expect(0, "", "", "-cp", "/src/b", "/src/sub", "/multi/") // several sources into a directory
	e.expect(0, lines("/multi/b", "/multi/sub", "/multi/sub/c", "/multi/sub/deep", "/multi/sub/deep/d", "/multi/sub/deep/e"), "", "-ls", "-C", "-R", "/multi")
	e.expect(0, "", "", "-cp", "-d", "/src/sub/*", "/dst/") // a pattern, without temporary files
	e.expect(0, lines("/dst/c", "/dst/deep"), "", "-ls", "-C", "-d", "/dst/c", "/dst/deep")
	e.namespace("other")
	e.expect(0, "", "", "-cp", "/src", "strata://other/")
	sameTree(t, e, "strata://other/src", files)
	e.expect(1, "", "", "-test", "-e", "/dst/src/b"+copyingSuffix)
	out := e.ok("-ls", "-C", "-R", "/", "strata://other/")
	if strings.Contains(out, copyingSuffix) || !strings.Contains(out, "/dst/src/sub/deep/d\n") {
		t.Fatalf("left behind:\n%s", out)
	}
}

// -cp fails as Hadoop's does, with its messages.
func TestCpErrors(t *testing.T) {
	e := newDataEnv(t)
	srcTree(t, e)
	e.ok("-cp", "/src/b", "/x")
	e.expect(1, "", lines("cp: `/x': File exists"), "-cp", "/src/b", "/x")
	e.expect(0, "", "", "-cp", "-f", "/src/sub/c", "/x")
	e.expect(0, lines("4097"), "", "-stat", "%b", "/x")
	e.expect(1, "", lines("cp: `/nope': No such file or directory"), "-cp", "/nope", "/y")
	e.expect(1, "", lines("cp: `/nope*': No such file or directory"), "-cp", "/nope*", "/src/b", "/src/sub")
	e.expect(1, "", lines("cp: `/x': File exists"), "-cp", "/src", "/x")
	e.expect(1, "", lines("cp: `/x': Is not a directory"), "-cp", "-f", "/src", "/x")
	e.expect(1, "", lines("cp: `/x': Is not a directory"), "-cp", "/src/a", "/src/b", "/x")
	e.expect(1, "", lines("cp: `/y': No such file or directory"), "-cp", "/src/a", "/src/b", "/y")
	e.expect(1, "", lines("cp: `/no/where': No such file or directory: `strata://default/no/where'"), "-cp", "/src/a", "/no/where")
	e.expect(1, "", lines("cp: `/src' to `/src/sub/src': is a subdirectory of itself"), "-cp", "/src", "/src/sub")
	e.expect(1, "", lines("cp: `/src' to `/src': are identical"), "-cp", "/src", "/")
	e.ok("-mkdir", "/d", "/d/b")
	e.expect(1, "", lines("cp: `/d/b': File exists"), "-cp", "-f", "/src/b", "/d")
	e.expect(1, "", lines("cp: `/d/b': File exists", "cp: `/d/a': File exists"), "-cp", "/src/a", "/src/b", "/src/a", "/d")
	e.expect(1, "", "", "-test", "-e", "/y")
}

// -p preserves what it names; without it a copy is new.
func TestCpPreserve(t *testing.T) {
	e := newDataEnv(t)
	srcTree(t, e)
	e.ok("-touch", "-t", "20200102:030405", "/src/b")
	e.ok("-chmod", "600", "/src/b")
	e.ok("-chown", "alice:hadoop", "/src/b")
	e.ok("-cp", "/src/b", "/plain")
	e.ok("-cp", "-p", "/src/b", "/all")
	e.ok("-cp", "-ptp", "/src/b", "/tp")
	e.ok("-cp", "/src/b", "/pa", "-pax") // anywhere, as Hadoop pops it
	me := e.super + ":supergroup"
	e.expect(0, lines("644 "+me), "", "-stat", "%a %u:%g", "/plain")
	e.expect(0, lines("600 alice:hadoop 2020-01-02 03:04:05"), "", "-stat", "%a %u:%g %y", "/all")
	e.expect(0, lines("600 "+me+" 2020-01-02 03:04:05"), "", "-stat", "%a %u:%g %y", "/tp")
	e.expect(0, lines("600 "+me), "", "-stat", "%a %u:%g", "/pa")
	if r := e.as(e.super).run("-cp", "-pz", "/src/b", "/z"); r.code != 255 || firstLine(r.err) != "-cp: No attribute for z\n" {
		t.Fatalf("-pz: %+v", r)
	}
}
