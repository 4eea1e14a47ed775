package namespace_test

import (
	"testing"

	"github.com/stratafs/strata/internal/namespace"
)

func TestRename(t *testing.T) {
	var (
		plain     = namespace.RenameOptions{}
		overwrite = namespace.RenameOptions{Overwrite: true}
		rename2   = namespace.RenameOptions{NoDescend: true}
		rename2ow = namespace.RenameOptions{NoDescend: true, Overwrite: true}
	)
	for _, tc := range []struct {
		name     string
		src, dst string
		o        namespace.RenameOptions
		final    string // "" when err is set
		err      error
	}{
		{"file to a new name", "/src/f", "/src/g", plain, "/src/g", nil},
		{"file to a new directory", "/src/f", "/dst/g", rename2, "/dst/g", nil},
		{"file into an existing directory", "/src/f", "/dst", plain, "/dst/f", nil},
		{"file onto an existing directory, rename2", "/src/f", "/dst", rename2, "", namespace.ErrExists},
		{"file onto an existing directory, rename2 overwrite", "/src/f", "/dst", rename2ow, "", namespace.ErrIsDir},
		{"file over a file", "/src/f", "/full/f", plain, "", namespace.ErrExists},
		{"file over a file, overwrite", "/src/f", "/full/f", overwrite, "/full/f", nil},
		{"file into a directory holding its name", "/src/f", "/full", plain, "", namespace.ErrExists},
		{"file into a directory holding its name, overwrite", "/src/f", "/full", overwrite, "/full/f", nil},
		{"file over a file being written", "/src/f", "/full/open", rename2ow, "", namespace.ErrLeaseConflict},
		{"file being written", "/full/open", "/dst/open", plain, "/dst/open", nil},
		{"directory to a new name", "/src", "/moved", plain, "/moved", nil},
		{"directory into a directory", "/src", "/dst", plain, "/dst/src", nil},
		{"directory over an empty directory", "/src", "/dst", rename2ow, "/dst", nil},
		{"directory over a non-empty directory", "/src", "/full", rename2ow, "", namespace.ErrNotEmpty},
		{"directory over a file", "/src", "/full/f", overwrite, "", namespace.ErrNotDir},
		{"directory into its child", "/src", "/src/sub", plain, "", namespace.ErrRenameLoop},
		{"directory under its grandchild", "/src", "/src/sub/x", rename2, "", namespace.ErrRenameLoop},
		{"directory under itself", "/src", "/src/new", plain, "", namespace.ErrRenameLoop},
		{"directory onto itself", "/src", "/src", plain, "/src", nil},
		{"directory onto itself, rename2", "/src", "/src", rename2, "", namespace.ErrExists},
		{"file onto itself", "/src/f", "/src/f", overwrite, "/src/f", nil},
		{"file onto itself, rename2", "/src/f", "/src/f", rename2ow, "", namespace.ErrExists},
		{"file into its own directory", "/src/f", "/src", plain, "/src/f", nil},
		{"to the root", "/src/f", "/", plain, "/f", nil},
		{"onto the root, rename2", "/src", "/", rename2ow, "", namespace.ErrExists},
		{"the root", "/", "/dst", plain, "", namespace.ErrRoot},
		{"missing source", "/src/nope", "/dst/x", plain, "", namespace.ErrNotFound},
		{"source under a file", "/src/f/x", "/dst/x", plain, "", namespace.ErrNotFound},
		{"missing destination parent", "/src/f", "/nope/f", plain, "", namespace.ErrNotFound},
		{"destination parent is a file", "/src/f", "/full/f/g", plain, "", namespace.ErrParentNotDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.tree("/src/f", "/src/sub/x", "/dst/", "/full/f")
			if _, err := e.create(super, "/full/open", namespace.CreateOptions{Holder: "h"}); err != nil {
				t.Fatal(err)
			}
			before := e.summary("/")
			src, _ := e.fs.Stat(e.tx, super, dflt, tc.src)
			final, err := e.rename(super, tc.src, tc.dst, tc.o)
			wantErr(t, err, tc.err)
			if final != tc.final {
				t.Fatalf("final path %q, want %q", final, tc.final)
			}
			e.check()
			if e.summary("/") != before && (err != nil || !tc.o.Overwrite) {
				t.Fatalf("summary changed from %+v to %+v", before, e.summary("/"))
			}
			if err != nil || final == tc.src {
				if src != nil && e.stat(tc.src).ID != src.ID {
					t.Fatal("the source moved")
				}
				return
			}
			if e.exists(tc.src) || e.stat(final).ID != src.ID {
				t.Fatalf("%s did not move to %s", tc.src, final)
			}
			for _, dir := range []string{parentOf(tc.src), parentOf(final)} {
				if e.stat(dir).Mtime != e.now {
					t.Errorf("%s: mtime %d, want %d", dir, e.stat(dir).Mtime, e.now)
				}
			}
		})
	}
}

// Rename keeps the aggregates of both ancestries right, whatever it
// replaces.
func TestRenameAggregates(t *testing.T) {
	e := newEnv(t)
	e.tree("/x/a/one", "/x/a/sub/two", "/y/z/", "/y/z/old")
	if _, err := e.rename(super, "/x/a", "/y/z", namespace.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]namespace.Summary{
		"/":      {Length: 28, Files: 3, Dirs: 6},
		"/x":     {Dirs: 1},
		"/y":     {Length: 28, Files: 3, Dirs: 4},
		"/y/z":   {Length: 28, Files: 3, Dirs: 3},
		"/y/z/a": {Length: 20, Files: 2, Dirs: 2},
	} {
		if got := e.summary(p); got != want {
			t.Errorf("%s: %+v, want %+v", p, got, want)
		}
	}
	// Replacing a file uncounts it.
	if _, err := e.rename(super, "/y/z/a/one", "/y/z/old", namespace.RenameOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.summary("/y"); got != (namespace.Summary{Length: 20, Files: 2, Dirs: 4}) {
		t.Errorf("after overwrite: %+v", got)
	}
	if got := e.stat("/y/z/a").Children; got != 1 {
		t.Errorf("children %d", got)
	}
	e.check()
}

// An open file moves with its lease: its writer completes it where it is
// now, by the path it created or by the new one (as HDFS, whose writers
// follow their file's inode).
func TestRenameOpenFile(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/a")
	e.mkdir("/b")
	n, err := e.create(super, "/a/f", namespace.CreateOptions{Holder: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.rename(super, "/a", "/b", namespace.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	o := namespace.CompleteOptions{Inode: n.ID, Holder: "h", Length: 2, Inline: true, Data: []byte("hi")}
	wantErr(t, e.complete(super, "/a/f", namespace.CompleteOptions{Inode: n.ID, Holder: "other", Length: 2, Inline: true, Data: []byte("hi")}), namespace.ErrNotFound)
	if err := e.complete(super, "/a/f", o); err != nil {
		t.Fatal(err)
	}
	if got := e.summary("/b"); got != (namespace.Summary{Length: 2, Files: 1, Dirs: 2}) {
		t.Fatalf("%+v", got)
	}
	e.check()
}

func TestRenamePermissions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        namespace.Caller
		src, dst string
		err      error
	}{
		{"own directories", alice, "/home/alice/f", "/home/alice/g", nil},
		{"into a directory without write", alice, "/home/alice/f", "/ro/f", namespace.ErrPermission},
		{"out of a directory without write", alice, "/ro/x", "/home/alice/x", namespace.ErrPermission},
		{"into a directory without search", alice, "/home/alice/f", "/noexec", namespace.ErrPermission},
		{"into a group-writable directory", bob, "/home/bob/f", "/shared/f", nil},
		{"sticky: another's file", bob, "/tmp/alice", "/tmp/mine", namespace.ErrPermission},
		{"sticky: own file", alice, "/tmp/alice", "/tmp/mine", nil},
		{"sticky: replacing another's file", alice, "/tmp/alice", "/tmp/bob", namespace.ErrPermission},
		{"superuser", super, "/tmp/alice", "/ro/x2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := permFixture(t)
			o := namespace.RenameOptions{Overwrite: true}
			_, err := e.rename(tc.c, tc.src, tc.dst, o)
			wantErr(t, err, tc.err)
			e.check()
		})
	}
}
