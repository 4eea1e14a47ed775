package fsshell

import (
	"context"
	"io"
	"testing"

	"github.com/stratafs/strata/internal/client"
)

// offlineShell is a shell whose client never reaches a service: enough for
// what needs only the user's name.
func offlineShell(t *testing.T) *shell {
	t.Helper()
	c, err := client.New(client.Config{Meta: "127.0.0.1:1", User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sh := newShell(context.Background(), io.Discard, io.Discard, nil)
	sh.fs = c
	return sh
}

func TestResolve(t *testing.T) {
	sh := offlineShell(t)
	for _, c := range []struct {
		arg, ns, abs string
		form         pathForm
		display      string // how a match at abs prints
	}{
		{"/a//b/", "", "/a/b", pathForm{}, "/a/b"},
		{"/a/./c/../b", "", "/a/b", pathForm{}, "/a/b"},
		{"rel/x", "", "/user/alice/rel/x", pathForm{relative: true}, "rel/x"},
		{".", "", "/user/alice", pathForm{relative: true}, "."},
		{"../bob", "", "/user/bob", pathForm{relative: true}, "../bob"},
		{"strata://ns1/a", "ns1", "/a", pathForm{scheme: true, authority: "ns1"}, "strata://ns1/a"},
		{"strata://ns1", "ns1", "/", pathForm{scheme: true, authority: "ns1"}, "strata://ns1/"},
		{"strata:///a/", "", "/a", pathForm{scheme: true}, "strata:///a"},
		{"strata:/a", "", "/a", pathForm{scheme: true}, "strata:///a"},
	} {
		p, f, err := sh.resolve(c.arg)
		if err != nil || p.ns != c.ns || p.abs != c.abs || f != c.form || p.text != c.arg {
			t.Errorf("resolve(%q) = %+v %+v %v", c.arg, p, f, err)
			continue
		}
		if got := sh.display(f, p.abs, true); got != c.display {
			t.Errorf("display of %q = %q, want %q", c.arg, got, c.display)
		}
	}
	if _, _, err := sh.resolve("hdfs://nn/a"); err == nil || err.Error() != `No FileSystem for scheme "hdfs"` {
		t.Errorf("hdfs: %v", err)
	}
	if _, _, err := sh.resolve(""); err == nil {
		t.Error("an empty path was accepted")
	}
}

func TestChildText(t *testing.T) {
	for parent, want := range map[string]string{
		".": "x", "/": "/x", "/a": "/a/x", "d/": "d/x", "strata://ns": "strata://ns/x", "strata://ns/": "strata://ns/x",
	} {
		p := &pathData{text: parent, abs: "/p"}
		if got := p.childNamed("x").text; got != want {
			t.Errorf("child of %q = %q, want %q", parent, got, want)
		}
	}
	for text, want := range map[string]bool{"a/": true, ".": true, "a/..": true, "/": true, "a": false, "/a/b": false} {
		if got := (&pathData{text: text}).representsDir(); got != want {
			t.Errorf("representsDir(%q) = %v", text, got)
		}
	}
}
