package fsshell

import (
	"strings"
	"testing"
)

func TestMkdir(t *testing.T) {
	e := newEnv(t)
	e.expect(0, "", "", "-mkdir", "/m")
	e.expect(1, "", lines("mkdir: `/m': File exists"), "-mkdir", "/m")
	e.expect(0, "", "", "-mkdir", "-p", "/m", "/m/p/q")
	e.expect(1, "", lines("mkdir: `/x/y': No such file or directory"), "-mkdir", "/x/y")
	e.ok("-touchz", "/m/f")
	e.expect(1, "", lines("mkdir: `/m/f': Is not a directory", "mkdir: `/m/f/g': Is not a directory"), "-mkdir", "-p", "/m/f", "/m/f/g")
	e.expect(1, "", lines("mkdir: `/m/f/g': Is not a directory"), "-mkdir", "/m/f/g")
	e.expect(0, lines("755 rwxr-xr-x"), "", "-stat", "%a %A", "/m/p/q")
	e.expect(1, "", lines("mkdir: `/m/a?b': Invalid path name: the name \"a\\x00b\" holds a NUL character"), "-mkdir", "/m/a\x00b")
}

func TestRmAndRmdir(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "-p", "/d/e/f", "/d/empty")
	e.ok("-touchz", "/d/x", "/d/y", "/d/e/f/g")
	e.expect(1, "", lines("rm: `/d': Is a directory"), "-rm", "/d")
	e.expect(1, "", lines("rm: `/nope': No such file or directory"), "-rm", "/nope")
	e.expect(0, lines("Deleted /d/x", "Deleted /d/y"), "", "-rm", "-skipTrash", "/d/[xy]")
	e.expect(0, "", "", "-rm", "-f", "/nope", "/d/q*")
	e.expect(1, "", lines("rmdir: `/d/e': Directory is not empty"), "-rmdir", "/d/e")
	e.expect(0, "", "", "-rmdir", "--ignore-fail-on-non-empty", "/d/e", "/d/empty")
	e.expect(1, "", lines("rmdir: `/d/e/f/g': Is not a directory", "rmdir: `/d/empty': No such file or directory"), "-rmdir", "/d/e/f/g", "/d/empty")
	e.expect(0, lines("Deleted /d"), "", "-rm", "-R", "/d")
	e.expect(1, "", lines("rm: Cannot delete /: the root directory is not allowed to be deleted"), "-rm", "-r", "/")
	e.expect(1, "", lines("rm: Cannot delete strata://default/: the root directory is not allowed to be deleted"),
		"-rm", "-r", "-skipTrash", "strata://default/")
	e.expect(1, "", lines("test: `/d*': No such file or directory"), "-test", "-e", "/d*")
}

func TestMv(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "-p", "/s/sub", "/t")
	e.ok("-touchz", "/s/f1", "/s/f2", "/s/sub/g", "/t/f2", "/lone")
	e.expect(0, "", "", "-mv", "/s/f1", "/t")
	e.expect(0, "", "", "-mv", "/t/f1", "/t/renamed")
	e.expect(1, "", lines("mv: `/t/f2': File exists"), "-mv", "/s/f2", "/t")
	e.expect(1, "", lines("mv: `/lone': File exists"), "-mv", "/s/f2", "/lone")
	e.expect(1, "", lines("mv: `/lone': Is not a directory"), "-mv", "/s/f2", "/s/sub", "/lone")
	e.expect(1, "", lines("mv: `/nodir': No such file or directory"), "-mv", "/s/f2", "/s/sub", "/nodir")
	e.expect(1, "", lines("mv: `/x/y': No such file or directory: `strata://default/x/y'"), "-mv", "/s/f2", "/x/y")
	e.expect(1, "", lines("mv: `/s' to `/s/sub/s': is a subdirectory of itself"), "-mv", "/s", "/s/sub")
	e.expect(1, "", lines("mv: `/nope': No such file or directory"), "-mv", "/nope", "/t")
	e.expect(1, "", lines("mv: `/t/*': Too many matches"), "-mv", "/lone", "/t/*")
	e.expect(0, "", "", "-mv", "/s/sub", "/t")
	e.expect(0, lines("/t/f2", "/t/renamed", "/t/sub", "/t/sub/g"), "", "-ls", "-C", "-R", "/t")
	e.expect(0, "", "", "-mv", "/t", "strata://default/t2")
	e.namespace("other")
	e.ok("-touchz", "strata://other/x")
	e.expect(1, "", lines("mv: `strata://other/x': Does not match target filesystem"), "-mv", "strata://other/x", "/t2")
	e.expect(1, "", lines("mv: `strata://nons/x': No such namespace"), "-mv", "strata://nons/x", "/t2")
	// A relative destination is under /user/<user>.
	e.ok("-mkdir", "-p", "/user/"+e.super)
	e.expect(0, "", "", "-mv", "/lone", "here")
	e.expect(0, lines("here"), "", "-ls", "-C")
}

func TestTouchzAndTouch(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "/z")
	e.expect(0, "", "", "-touchz", "/z/a", "/z/a")
	c := e.as(e.super)
	c.stdin = strings.NewReader("content")
	if r := c.run("-put", "-", "/z/full"); r.code != 0 {
		t.Fatalf("put: %+v", r)
	}
	e.expect(1, "", lines("touchz: `/z/full': Not a zero-length file", "touchz: `/z': Is a directory", "touchz: `/q/a': No such file or directory"),
		"-touchz", "/z/full", "/z", "/q/a")
	e.expect(0, "", "", "-touch", "-t", "20200304:050607", "/z/a", "/z/new")
	e.expect(0, lines("2020-03-04 05:06:07 2020-03-04 05:06:07 0", "2020-03-04 05:06:07 2020-03-04 05:06:07 0"), "", "-stat", "%y %x %b", "/z/a", "/z/new")
	e.expect(0, "", "", "-touch", "-m", "-t", "20210101000000", "/z/a")
	e.expect(0, lines("2021-01-01 00:00:00 2020-03-04 05:06:07"), "", "-stat", "%y %x", "/z/a")
	e.expect(0, "", "", "-touch", "-a", "-t", "20220101:000000", "/z/a")
	e.expect(0, lines("2021-01-01 00:00:00 2022-01-01 00:00:00"), "", "-stat", "%y %x", "/z/a")
	e.expect(0, "", "", "-touch", "-c", "/z/absent")
	e.expect(1, "", "", "-test", "-e", "/z/absent")
	e.expect(1, "", lines("touch: `/z': Is a directory", "touch: `/q/a': No such file or directory"), "-touch", "/z", "/q/a")
}

func TestTest(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "/d")
	e.ok("-touchz", "/d/empty")
	c := e.as(e.super)
	c.stdin = strings.NewReader("x")
	c.run("-put", "-", "/d/full")
	for _, tc := range []struct {
		flag, path string
		code       int
	}{
		{"-e", "/d", 0}, {"-e", "/nope", 1}, {"-d", "/d", 0}, {"-d", "/d/empty", 1},
		{"-f", "/d/empty", 0}, {"-f", "/d", 1}, {"-s", "/d/full", 0}, {"-s", "/d/empty", 1},
		{"-z", "/d/empty", 0}, {"-z", "/d/full", 1}, {"-r", "/d/full", 0}, {"-w", "/d/full", 0},
		{"-e", "/d/*", 0}, {"-d", "/nope", 1},
	} {
		e.expect(tc.code, "", "", "-test", tc.flag, tc.path)
	}
}
