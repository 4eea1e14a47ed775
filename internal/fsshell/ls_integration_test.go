package fsshell

import (
	"fmt"
	"strings"
	"testing"
)

// tree makes /a as the listing tests expect it, owned by alice:hadoop:
// /a/b/f (empty), /a/data (1500 bytes), /a/empty/, /a/z (empty).
func (e *env) tree() {
	e.t.Helper()
	e.ok("-mkdir", "-p", "/a/b", "/a/empty")
	e.ok("-touchz", "/a/b/f", "/a/z")
	put := e.as(e.super)
	put.stdin = strings.NewReader(strings.Repeat("x", 1500))
	if r := put.run("-put", "-", "/a/data"); r.code != 0 {
		e.t.Fatalf("put: %+v", r)
	}
	e.ok("-chown", "-R", "alice:hadoop", "/a")
}

func TestLs(t *testing.T) {
	e := newEnv(t)
	e.tree()
	dir := func(p string) string { return "drwxr-xr-x   - alice hadoop          0 DATE " + p }
	file := func(size, p string) string { return fmt.Sprintf("-rw-r--r--   1 alice hadoop %10s DATE %s", size, p) }
	e.expect(0, lines("Found 1 items", dir("/a")), "", "-ls", "/")
	e.expect(0, lines("Found 4 items", dir("/a/b"), file("1500", "/a/data"), dir("/a/empty"), file("0", "/a/z")), "", "-ls", "/a")
	e.expect(0, lines(dir("/a/b"), file("0", "/a/b/f"), file("1500", "/a/data"), dir("/a/empty"), file("0", "/a/z")), "", "-ls", "-R", "/a")
	e.expect(0, lines(dir("/a")), "", "-ls", "-d", "/a")
	e.expect(0, lines(file("0", "/a/z")), "", "-ls", "/a/z")
	e.expect(0, lines("/a/b", "/a/b/f", "/a/data", "/a/empty", "/a/z"), "", "-ls", "-C", "-R", "/a")
	e.expect(0, lines("Found 4 items", file("1500", "/a/data"), dir("/a/b"), dir("/a/empty"), file("0", "/a/z")), "", "-ls", "-S", "/a")
	e.expect(0, lines("Found 4 items", dir("/a/b"), dir("/a/empty"), file("0", "/a/z"), file("1500", "/a/data")), "", "-ls", "-S", "-r", "/a")
	e.expect(0, lines(file("1.5 K", "/a/data")), "", "-ls", "-h", "/a/./data")
	e.expect(0, "", "", "-ls", "/a/empty")
	e.expect(1, lines("Found 1 items", file("0", "/a/b/f")),
		lines("ls: `/nope': No such file or directory", "ls: `/a/z/x': No such file or directory"), "-ls", "/nope", "/a/b", "/a/z/x")
}

func TestLsGlobsAndPathForms(t *testing.T) {
	e := newEnv(t)
	e.tree()
	dir := func(p string) string { return "drwxr-xr-x   - alice hadoop          0 DATE " + p }
	file := func(p string) string { return "-rw-r--r--   1 alice hadoop          0 DATE " + p }
	e.expect(0, lines("/a/b", "/a/data", "/a/empty", "/a/z"), "", "-ls", "-C", "-d", "/a/*")
	e.expect(0, lines("Found 1 items", file("/a/b/f"), file("/a/z")), "", "-ls", "/a/{z,b}")
	e.expect(0, lines("/a/b/f", "/a/z", "/a/b/f"), "", "-ls", "-C", "-d", "/a/{b/f,z}", "/a/[!c-z]*/?")
	e.expect(1, "", lines("ls: `/a/x*': No such file or directory"), "-ls", "/a/x*")
	e.expect(1, "", lines("ls: Illegal file pattern: Unclosed character class for glob [x at 2"), "-ls", "/a/[x")
	e.expect(0, lines("Found 1 items", file("strata://default/a/b/f")), "", "-ls", "strata://default/a/b")
	e.expect(0, lines(dir("strata:///a/b"), dir("strata:///a/empty")), "", "-ls", "-d", "strata:///a/[be]*")
	e.expect(1, "", lines("ls: `strata://nons/': No such namespace"), "-ls", "strata://nons/")
	e.expect(1, "", lines(`ls: No FileSystem for scheme "hdfs"`), "-ls", "hdfs://nn/a")

	// Relative paths are under /user/<user>, and print relative.
	home := "/user/" + e.super
	e.expect(1, "", lines("ls: `.': No such file or directory"), "-ls")
	e.ok("-mkdir", "-p", home+"/r")
	e.ok("-touchz", "r/x", "top")
	e.ok("-chown", "-R", "alice:hadoop", home)
	e.expect(0, lines("Found 2 items", dir("r"), file("top")), "", "-ls")
	e.expect(0, lines(dir("r"), file("r/x"), file("top")), "", "-ls", "-R", ".")
	e.expect(0, lines("r", "r/x"), "", "-ls", "-C", "-d", "r*", "r/*")
	e.expect(0, lines("Found 1 items", dir("../"+e.super)), "", "-ls", "..")
	e.expect(0, lines("../../a/z"), "", "-ls", "-C", "../../a/z*")
}

func TestLsSortsByTime(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "/t")
	e.ok("-touchz", "/t/t1", "/t/t2", "/t/t3")
	e.ok("-touch", "-m", "-t", "20210101:000000", "/t/t1")
	e.ok("-touch", "-m", "-t", "20230101:000000", "/t/t2")
	e.ok("-touch", "-m", "-t", "20220101:000000", "/t/t3")
	e.ok("-touch", "-a", "-t", "20200101:120000", "/t/t1", "/t/t2")
	e.ok("-touch", "-a", "-t", "20190101:120000", "/t/t3")
	if got := e.ok("-ls", "-C", "-t", "/t"); got != lines("/t/t2", "/t/t3", "/t/t1") {
		t.Fatalf("-t: %q", got)
	}
	if got := e.ok("-ls", "-C", "-t", "-r", "/t"); got != lines("/t/t1", "/t/t3", "/t/t2") {
		t.Fatalf("-t -r: %q", got)
	}
	out := e.ok("-ls", "-t", "-u", "/t")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(l)
		got = append(got, f[5]+" "+f[6]+" "+f[7])
	}
	if strings.Join(got, ",") != "2020-01-01 12:00 /t/t1,2020-01-01 12:00 /t/t2,2019-01-01 12:00 /t/t3" {
		t.Fatalf("-t -u: %q", got)
	}
}

func TestDuAndCount(t *testing.T) {
	e := newEnv(t)
	e.tree()
	e.expect(0, lines("0     0     /a/b", "1500  1500  /a/data", "0     0     /a/empty", "0     0     /a/z"), "", "-du", "/a")
	e.expect(0, lines("1500  1500  /a", "0     0     /a/z"), "", "-du", "-s", "/a", "/a/z")
	e.expect(0, lines("SIZE   DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME", "1.5 K  1.5 K                                  /a"), "", "-du", "-s", "-h", "-v", "-x", "/a")
	e.expect(1, lines("0  0  /a/z"), lines("du: `/nope': No such file or directory"), "-du", "/nope", "/a/z")
	e.expect(0, "", "", "-du", "/a/empty")
	e.expect(0, lines(
		"           3            3               1500 /a",
		"           0            1               1500 /a/data"), "", "-count", "/a", "/a/data")
	e.expect(0, lines(
		"   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME",
		"           1            0                  0 /a/empty"), "", "-count", "-v", "/a/empty")
	e.expect(0, lines(
		"       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME",
		"        none             inf            none             inf            3            3              1.5 K /a"), "", "-count", "-q", "-h", "-v", "/a")
	e.expect(0, lines("        none             inf            none             inf /a"), "", "-count", "-u", "/a")
	e.expect(1, "", lines("count: `/a/n*': No such file or directory"), "-count", "/a/n*")
}

func TestStat(t *testing.T) {
	e := newEnv(t)
	e.tree()
	e.ok("-touch", "-t", "20240102:150405", "/a/data")
	if got := e.ok("-stat", "%y %Y %x %X %n", "/a/data"); got != "2024-01-02 15:04:05 1704207845000 2024-01-02 15:04:05 1704207845000 data\n" {
		t.Fatalf("stat: %q", got)
	}
	e.expect(0, lines("regular file 644 rw-r--r-- alice:hadoop 1500 1 67108864", "directory 755 rwxr-xr-x alice:hadoop 0 0 0"), "",
		"-stat", "%F %a %A %u:%g %b %r %o", "/a/data", "/a/b")
	e.expect(0, lines("a", "b", "f", "data", "empty", "z"), "", "-stat", "-R", "%n", "/a")
	e.expect(1, lines("2024-01-02 15:04:05"), lines("stat: `/nope': No such file or directory"), "-stat", "/nope", "/a/data")
}

// -ls -R fetches directories' first pages ahead of its walk (lookahead):
// what it prints is still the walk's order, past the window of directories
// fetched ahead, through a directory of more than a page, and a directory
// the user may not list is an error where the walk meets it.
func TestLsRecursiveAhead(t *testing.T) {
	e := newEnv(t)
	var dirs, files, want []string
	for i := range 12 { // more than lsAhead
		d := fmt.Sprintf("/w/d%02d", i)
		dirs = append(dirs, d+"/sub")
		files = append(files, d+"/f", d+"/sub/g")
	}
	e.ok(append([]string{"-mkdir", "-p"}, dirs...)...)
	var big []string
	for i := range 1005 { // past a page (client.ListPageSize)
		big = append(big, fmt.Sprintf("/w/d05/sub/m%04d", i))
	}
	e.ok(append([]string{"-touchz"}, append(files, big...)...)...)
	e.ok("-chmod", "700", "/w/d07")
	for i := range 12 {
		d := fmt.Sprintf("/w/d%02d", i)
		want = append(want, d)
		if i == 7 {
			continue // alice may not list it
		}
		want = append(want, d+"/f", d+"/sub", d+"/sub/g")
		if i == 5 {
			want = append(want, big...) // after g
		}
	}
	e.as("alice").expect(t, 1, lines(want...), "ls: Permission denied: user=alice, path=\"/w/d07\"\n", "-ls", "-C", "-R", "/w")
}
