package fsshell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeLocal(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

func readLocal(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPutCatGet(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "hello.txt")
	writeLocal(t, src, "hello strata\n")
	e.ok("-mkdir", "/in")
	e.expect(0, "", "", "-put", src, "/in")
	e.expect(1, "", lines("put: `/in/hello.txt': File exists"), "-put", src, "/in/")
	e.expect(0, "", "", "-copyFromLocal", "-f", src, "/in/hello.txt")
	e.expect(0, "", "", "-put", src, "/in/renamed")
	e.expect(1, "", lines("put: `/in/renamed': File exists"), "-put", src, "/in/renamed")
	e.expect(1, "", lines("put: `/in/renamed': Is not a directory"), "-put", src, src, "/in/renamed")
	e.expect(1, "", lines("put: `/no/where': No such file or directory: `strata://default/no/where'"), "-put", src, "/no/where")
	e.expect(1, "", lines("put: `"+dir+"/absent': No such file or directory"), "-put", dir+"/absent", "/in")
	e.expect(0, "hello strata\nhello strata\n", "", "-cat", "/in/hello.txt", "/in/ren*")
	e.expect(1, "", lines("cat: `/in': Is a directory", "cat: `/in/x': No such file or directory"), "-cat", "/in", "/in/x")
	e.expect(0, lines("/in/hello.txt", "/in/renamed"), "", "-ls", "-C", "/in")

	// A directory goes recursively, with -p keeping times and mode.
	tree := filepath.Join(dir, "tree")
	writeLocal(t, filepath.Join(tree, "a"), "A")
	writeLocal(t, filepath.Join(tree, "sub", "b"), "BB")
	stamp := time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(tree, "a"), stamp, stamp); err != nil {
		t.Fatal(err)
	}
	e.expect(0, "", "", "-put", "-p", tree, "/in")
	e.expect(0, lines("tree 0", "a 1", "sub 0", "b 2"), "", "-stat", "-R", "%n %b", "/in/tree")
	e.expect(0, lines("640 2021-05-06 07:08:09"), "", "-stat", "%a %y", "/in/tree/a")

	// -get copies back, refusing to overwrite without -f.
	out := t.TempDir()
	e.expect(0, "", "", "-get", "/in/tree", "/in/hello.txt", out)
	if readLocal(t, filepath.Join(out, "tree", "sub", "b")) != "BB" || readLocal(t, filepath.Join(out, "hello.txt")) != "hello strata\n" {
		t.Fatal("-get copied the wrong content")
	}
	e.expect(1, "", lines("get: `"+out+"/hello.txt': File exists"), "-get", "/in/hello.txt", out)
	e.expect(0, "", "", "-copyToLocal", "-f", "/in/renamed", filepath.Join(out, "hello.txt"))
	e.expect(1, "", lines("get: `/in/nope': No such file or directory"), "-get", "/in/nope", out)
	e.expect(0, "", "", "-get", "-p", "/in/tree/a", filepath.Join(out, "a-copy"))
	if fi, err := os.Stat(filepath.Join(out, "a-copy")); err != nil || !fi.ModTime().Equal(stamp) || fi.Mode().Perm() != 0o640 {
		t.Fatalf("-get -p: %v %v", fi, err)
	}
	if matches, _ := filepath.Glob(filepath.Join(out, "*"+copyingSuffix)); len(matches) > 0 {
		t.Fatalf("left behind %v", matches)
	}
}

func TestPutFromStdinAndAppend(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "/in")
	c := e.as(e.super)
	c.stdin = strings.NewReader("from stdin")
	c.expect(t, 0, "", "", "-put", "-", "/in/s")
	e.expect(0, "from stdin", "", "-cat", "/in/s")
	big := writeTemp(t, []byte("appended"))
	e.expect(0, lines("/in/s"), "", "-ls", "-C", "/in")
	e.expect(0, "", "", "-appendToFile", big, "/in/s")
	e.expect(0, "from stdinappended", "", "-cat", "/in/s")
	c.stdin = strings.NewReader(" and more")
	c.expect(t, 0, "", "", "-appendToFile", big, "-", "/in/new")
	e.expect(0, "appended and more", "", "-cat", "/in/new")
	e.expect(1, "", lines("appendToFile: `/in': Is a directory"), "-appendToFile", big, "/in")
	e.expect(1, "", lines("appendToFile: `/nope/x': No such file or directory"), "-appendToFile", big, "/nope/x")
	e.expect(0, lines("Truncated /in/s to length: 4"), "", "-truncate", "-w", "4", "/in/s")
	e.expect(0, "from", "", "-cat", "/in/s")
	e.expect(1, "", lines("truncate: `/in/s': Cannot truncate to a larger file size. Current size: 4, truncate size: 5."), "-truncate", "5", "/in/s")
	e.expect(1, "", lines("truncate: `/in': Is a directory"), "-truncate", "0", "/in")
}
