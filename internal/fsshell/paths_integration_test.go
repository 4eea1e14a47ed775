package fsshell

import (
	"strings"
	"testing"
)

// One path rule (docs/semantics.md, "Paths"): the shell cleans what it is
// given as Hadoop's Path does, and names that the rule refuses are refused
// with the reason.
func TestPathRule(t *testing.T) {
	e := newEnv(t)
	e.expect(0, "", "", "-mkdir", "-p", "//dbl//slash")
	e.expect(0, lines("/dbl", "/dbl/slash"), "", "-ls", "-C", "-R", "/")
	e.expect(0, lines("/dbl/slash"), "", "-ls", "-C", "/./dbl/slash/../")
	e.expect(0, lines("/dbl"), "", "-ls", "-C", "/dbl/..")
	e.expect(1, "", lines("ls: `/..': Invalid path name: \"..\" goes above the root"), "-ls", "/..")
	e.expect(1, "", lines("ls: `/dbl/../..': Invalid path name: \"..\" goes above the root"), "-ls", "/dbl/../..")
	e.expect(1, "", lines("mkdir: `/a:b': Invalid path name: the name \"a:b\" holds ':', which a name may not hold (as in HDFS)"),
		"-mkdir", "/a:b")
	e.expect(1, "", lines(
		"mkdir: `/nl?x': Invalid path name: the name \"nl\\nx\" holds the control character U+000A, which a name may not hold",
		"mkdir: `/t?x': Invalid path name: the name \"t\\tx\" holds the control character U+0009, which a name may not hold"),
		"-mkdir", "/nl\nx", "/t\tx")
	e.expect(1, "", lines("touchz: `/bad?name': Invalid path name: the name \"bad\\xffname\" is not valid UTF-8"),
		"-touchz", "/bad\xffname")
	e.expect(1, "", lines("ls: `/bad?name': Invalid path name: the name \"bad\\xffname\" is not valid UTF-8"),
		"-ls", "/bad\xffname")
	e.expect(1, "", lines("mv: `/x:y': Invalid path name: the name \"x:y\" holds ':', which a name may not hold (as in HDFS)"),
		"-mv", "/dbl", "/x:y")
	e.ok("-touchz", "/f")
	e.expect(1, "", lines("cp: `/c:d': Invalid path name: the name \"c:d\" holds ':', which a name may not hold (as in HDFS)"),
		"-cp", "/f", "/c:d")
	put := e.as(e.super)
	put.stdin = strings.NewReader("data")
	put.expect(t, 1, "", lines("put: `/p:q': Invalid path name: the name \"p:q\" holds ':', which a name may not hold (as in HDFS)"),
		"-put", "-", "/p:q")
	// Nothing was made by the refusals.
	e.expect(0, lines("/dbl", "/f"), "", "-ls", "-C", "/")
}
