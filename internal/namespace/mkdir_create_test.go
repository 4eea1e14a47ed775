package namespace_test

import (
	"reflect"
	"testing"

	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func TestMkdirs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    string
		parents bool
		want    bool
		err     error
	}{
		{"new", "/d/new", false, true, nil},
		{"new with parents", "/d/x/y/z", true, true, nil},
		{"missing parent", "/d/x/y", false, false, namespace.ErrNotFound},
		{"existing directory", "/d", false, false, nil},
		{"existing directory with parents", "/d", true, false, nil},
		{"root", "/", true, false, nil},
		{"trailing slash", "/d/", false, false, nil},
		{"file in the way", "/d/f", true, false, namespace.ErrExists},
		{"file in the way without parents", "/d/f", false, false, namespace.ErrExists},
		{"file as parent", "/d/f/x", false, false, namespace.ErrParentNotDir},
		{"file as ancestor", "/d/f/x/y", true, false, namespace.ErrParentNotDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.tree("/d/", "/d/f")
			before := e.summary("/")
			got, err := e.mkdirs(super, tc.path, 0o755, 0, tc.parents)
			wantErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("created = %v, want %v", got, tc.want)
			}
			if !tc.want && e.summary("/") != before {
				t.Fatalf("summary changed from %+v to %+v", before, e.summary("/"))
			}
			if tc.want && !e.stat(tc.path).IsDir() {
				t.Fatalf("%s is not a directory", tc.path)
			}
			e.check()
		})
	}
}

func TestMkdirsAttributes(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	e.chmod("/d", 0o777)
	e.chown("/d", "", "eng")
	if _, err := e.mkdirs(alice, "/d/x/y/z", 0o555, 0o022, true); err != nil {
		t.Fatal(err)
	}
	now := e.now
	for _, tc := range []struct {
		path string
		perm uint16
	}{
		// Created parents get u+wx on top of the masked mode, as in HDFS;
		// the directory asked for gets exactly the masked mode.
		{"/d/x", 0o755}, {"/d/x/y", 0o755}, {"/d/x/y/z", 0o555},
	} {
		n := e.stat(tc.path)
		if n.Perm != tc.perm || n.Owner != "alice" || n.Group != "eng" || n.Mtime != now || n.Atime != now {
			t.Errorf("%s: %+v, want perm %o owner alice group eng times %d", tc.path, n, tc.perm, now)
		}
	}
	if d := e.stat("/d"); d.Mtime != now || d.Children != 1 {
		t.Errorf("parent: %+v", d)
	}
	if _, err := e.mkdirs(super, "/d/m", 0o777, 0o027, false); err != nil {
		t.Fatal(err)
	}
	if n := e.stat("/d/m"); n.Perm != 0o750 {
		t.Errorf("umask: perm %o, want 750", n.Perm)
	}
	if _, err := e.mkdirs(super, "/d/s", 0o11777, 0, false); err != nil {
		t.Fatal(err)
	}
	if n := e.stat("/d/s"); n.Perm != 0o1777 {
		t.Errorf("perm %o, want 1777", n.Perm)
	}
	e.check()
}

func TestCreate(t *testing.T) {
	opts := func(mod func(*namespace.CreateOptions)) namespace.CreateOptions {
		o := namespace.CreateOptions{Perm: 0o644, Holder: "h2"}
		if mod != nil {
			mod(&o)
		}
		return o
	}
	overwrite := func(o *namespace.CreateOptions) { o.Overwrite = true }
	parents := func(o *namespace.CreateOptions) { o.Parents = true }
	for _, tc := range []struct {
		name string
		path string
		o    namespace.CreateOptions
		err  error
	}{
		{"new", "/d/new", opts(nil), nil},
		{"createNonRecursive, missing parent", "/d/x/new", opts(nil), namespace.ErrNotFound},
		{"missing parents created", "/d/x/y/new", opts(parents), nil},
		{"over a directory", "/d", opts(overwrite), namespace.ErrIsDir},
		{"root", "/", opts(overwrite), namespace.ErrIsDir},
		{"existing file", "/d/f", opts(nil), namespace.ErrExists},
		{"existing file, overwrite", "/d/f", opts(overwrite), nil},
		{"file being written", "/d/open", opts(nil), namespace.ErrLeaseConflict},
		{"file being written, overwrite", "/d/open", opts(overwrite), namespace.ErrLeaseConflict},
		{"file being written, by the same holder", "/d/open", opts(func(o *namespace.CreateOptions) { o.Holder = "h1" }), namespace.ErrLeaseConflict},
		{"file as parent", "/d/f/x", opts(parents), namespace.ErrParentNotDir},
		{"no holder", "/d/new", opts(func(o *namespace.CreateOptions) { o.Holder = "" }), namespace.ErrInvalidArgument},
		{"holder with NUL", "/d/new", opts(func(o *namespace.CreateOptions) { o.Holder = "a\x00b" }), namespace.ErrInvalidArgument},
		{"replication too high", "/d/new", opts(func(o *namespace.CreateOptions) { o.Replication = 513 }), namespace.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.tree("/d/", "/d/f")
			if _, err := e.create(super, "/d/open", namespace.CreateOptions{Perm: 0o644, Holder: "h1"}); err != nil {
				t.Fatal(err)
			}
			before := e.summary("/")
			n, err := e.create(super, tc.path, tc.o)
			wantErr(t, err, tc.err)
			e.check()
			if err != nil {
				if e.summary("/") != before {
					t.Fatalf("summary changed from %+v to %+v", before, e.summary("/"))
				}
				return
			}
			if got := e.stat(tc.path); got.ID != n.ID || got.Holder != tc.o.Holder || got.Length != 0 {
				t.Fatalf("stat %+v after create returned %+v", got, n)
			}
		})
	}
}

func TestCreateAttributes(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	e.chmod("/d", 0o777)
	e.chown("/d", "", "staff")
	n, err := e.create(alice, "/d/f", namespace.CreateOptions{Perm: 0o666, Umask: 0o022, Holder: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	want := kvschema.Inode{ID: n.ID, Parent: e.stat("/d").ID, Name: "f", Type: kvschema.TypeFile, Perm: 0o644,
		Owner: "alice", Group: "staff", Mtime: e.now, Atime: e.now, Replication: namespace.DefaultReplication,
		BlockSize: namespace.DefaultBlockSize, Holder: "h1"}
	if got := *e.stat("/d/f"); !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got %+v\nwant %+v", got, want)
	}
	if d := e.stat("/d"); d.Mtime != e.now || d.Children != 1 || d.SubFiles != 1 {
		t.Fatalf("parent %+v", d)
	}
	if got := allLeases(t, e); len(got) != 1 || got[0] != (lease{"h1", n.ID}) {
		t.Fatalf("leases %v", got)
	}

	n, err = e.create(bob, "/d/g", namespace.CreateOptions{Perm: 0o640, Holder: "h2", Replication: 3, BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n.Replication != 3 || n.BlockSize != 1<<20 || n.Perm != 0o640 || n.Owner != "bob" {
		t.Fatalf("explicit settings lost: %+v", n)
	}
	e.check()
}

// A file's missing parents are searchable and writable by their owner
// whatever the umask, or the file could not go in them.
func TestCreateParentsGrantOwner(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	e.chmod("/d", 0o777)
	if _, err := e.create(alice, "/d/x/y/f", namespace.CreateOptions{Perm: 0o644, Umask: 0o277, Parents: true, Holder: "h"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/d/x", "/d/x/y"} {
		if n := e.stat(p); n.Perm != 0o700 || n.Owner != "alice" {
			t.Errorf("%s: perm %o owner %s, want 700 alice", p, n.Perm, n.Owner)
		}
	}
	if n := e.stat("/d/x/y/f"); n.Perm != 0o400 {
		t.Errorf("file perm %o, want 400", n.Perm)
	}
}

func TestCreateOverwriteReleasesContent(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	old, _ := e.create(super, "/d/f", namespace.CreateOptions{Holder: "h"})
	blocks := []kvschema.Block{{ID: 71, Offset: 0, Length: 10}, {ID: 72, Offset: 10, Length: 5}}
	if err := e.complete(super, "/d/f", namespace.CompleteOptions{Inode: old.ID, Holder: "h", Length: 15, Blocks: blocks}); err != nil {
		t.Fatal(err)
	}
	inl := e.write(super, "/d/i", "inline")
	if s := e.summary("/d"); s != (namespace.Summary{Length: 21, Files: 2, Dirs: 1}) {
		t.Fatalf("summary %+v", s)
	}
	for _, p := range []string{"/d/f", "/d/i"} {
		if _, err := e.create(super, p, namespace.CreateOptions{Holder: "h", Overwrite: true}); err != nil {
			t.Fatal(err)
		}
	}
	if s := e.summary("/d"); s != (namespace.Summary{Length: 0, Files: 2, Dirs: 1}) {
		t.Fatalf("summary after overwrite %+v", s)
	}
	s, err := readRaw(e.tx)
	if err != nil {
		t.Fatal(err)
	}
	if s.inodes[old.ID] != nil || s.inodes[inl.ID] != nil || s.inline[inl.ID] != nil || len(s.blocks[old.ID]) != 0 {
		t.Fatal("the overwritten files' records remain")
	}
	if len(s.garbage) != 2 || s.garbage[71] != blocks[0] || s.garbage[72] != blocks[1] {
		t.Fatalf("garbage queue %v", s.garbage)
	}
	e.check()
}

func TestComplete(t *testing.T) {
	blocks := func(lengths ...uint64) []kvschema.Block {
		var out []kvschema.Block
		var off uint64
		for i, l := range lengths {
			out = append(out, kvschema.Block{ID: uint64(100 + i), Offset: off, Length: l})
			off += l
		}
		return out
	}
	gap := blocks(10, 10)
	gap[1].Offset = 11
	const limit = 16
	for _, tc := range []struct {
		name string
		path string
		o    namespace.CompleteOptions // Inode 0 and Holder "" mean the right ones
		// inodeOf names the file whose inode o gets instead (the writer
		// follows its inode, not its path: a file at another path is not
		// found otherwise).
		inodeOf string
		err     error
	}{
		{"empty", "/f", namespace.CompleteOptions{}, "", nil},
		{"inline", "/f", namespace.CompleteOptions{Inline: true, Length: 3, Data: []byte("abc")}, "", nil},
		{"inline at the limit", "/f", namespace.CompleteOptions{Inline: true, Length: limit, Data: make([]byte, limit)}, "", nil},
		{"inline over the limit", "/f", namespace.CompleteOptions{Inline: true, Length: limit + 1, Data: make([]byte, limit+1)}, "", namespace.ErrInvalidArgument},
		{"inline, wrong length", "/f", namespace.CompleteOptions{Inline: true, Length: 4, Data: []byte("abc")}, "", namespace.ErrInvalidArgument},
		{"inline with blocks", "/f", namespace.CompleteOptions{Inline: true, Length: 3, Data: []byte("abc"), Blocks: blocks(3)}, "", namespace.ErrInvalidArgument},
		{"blocks", "/f", namespace.CompleteOptions{Length: 30, Blocks: blocks(10, 15, 5)}, "", nil},
		{"blocks with a gap", "/f", namespace.CompleteOptions{Length: 21, Blocks: gap}, "", namespace.ErrInvalidArgument},
		{"blocks not from 0", "/f", namespace.CompleteOptions{Length: 10, Blocks: []kvschema.Block{{ID: 1, Offset: 1, Length: 10}}}, "", namespace.ErrInvalidArgument},
		{"empty block", "/f", namespace.CompleteOptions{Length: 10, Blocks: blocks(10, 0)}, "", namespace.ErrInvalidArgument},
		{"blocks short of the length", "/f", namespace.CompleteOptions{Length: 31, Blocks: blocks(10, 20)}, "", namespace.ErrInvalidArgument},
		{"blocks beyond the length", "/f", namespace.CompleteOptions{Length: 29, Blocks: blocks(10, 20)}, "", namespace.ErrInvalidArgument},
		{"data with blocks", "/f", namespace.CompleteOptions{Length: 10, Blocks: blocks(10), Data: []byte("x")}, "", namespace.ErrInvalidArgument},
		{"wrong holder", "/f", namespace.CompleteOptions{Holder: "h2"}, "", namespace.ErrNoLease},
		{"wrong inode", "/f", namespace.CompleteOptions{Inode: 999}, "", namespace.ErrNoLease},
		{"closed file", "/closed", namespace.CompleteOptions{}, "/closed", namespace.ErrNoLease},
		{"directory", "/d", namespace.CompleteOptions{}, "/d", namespace.ErrIsDir},
		{"missing", "/nope", namespace.CompleteOptions{Inode: 999}, "", namespace.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := namespace.DefaultConfig("super")
			cfg.InlineLimit = limit
			e := newEnvWith(t, cfg)
			e.tree("/d/", "/closed")
			n, err := e.create(super, "/f", namespace.CreateOptions{Perm: 0o644, Holder: "h1"})
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o
			if o.Inode == 0 {
				o.Inode = n.ID
			}
			if tc.inodeOf != "" {
				o.Inode = e.stat(tc.inodeOf).ID
			}
			if o.Holder == "" {
				o.Holder = "h1"
			}
			err = e.complete(alice, tc.path, o)
			wantErr(t, err, tc.err)
			e.check()
			if tc.err != nil {
				if got := e.stat("/f"); got.Holder != "h1" || got.Length != 0 {
					t.Fatalf("failed complete changed the file: %+v", got)
				}
				return
			}
			got, content, err := e.fs.Open(e.tx, super, dflt, "/f")
			if err != nil {
				t.Fatal(err)
			}
			if got.Holder != "" || got.Length != o.Length || got.Mtime != e.now || string(content.Inline) != string(o.Data) ||
				len(content.Blocks) != len(o.Blocks) || len(allLeases(t, e)) != 0 {
				t.Fatalf("after complete: %+v, content %+v", got, content)
			}
			if s := e.summary("/"); s.Length != uint64(len("/closed"))+o.Length {
				t.Fatalf("summary %+v, want length 7+%d", s, o.Length)
			}
			wantErr(t, e.complete(super, "/f", o), namespace.ErrNoLease) // only once
		})
	}
}

func TestCreateClosed(t *testing.T) {
	const limit = 16
	for _, tc := range []struct {
		name string
		path string
		o    namespace.CreateOptions
		err  error
	}{
		{"empty", "/f", namespace.CreateOptions{Closed: true}, nil},
		{"inline", "/f", namespace.CreateOptions{Closed: true, Data: []byte("abc")}, nil},
		{"at the limit", "/f", namespace.CreateOptions{Closed: true, Data: make([]byte, limit)}, nil},
		{"over the limit", "/f", namespace.CreateOptions{Closed: true, Data: make([]byte, limit+1)}, namespace.ErrInvalidArgument},
		{"data of a file left open", "/f", namespace.CreateOptions{Data: []byte("abc")}, namespace.ErrInvalidArgument},
		{"over a closed file", "/closed", namespace.CreateOptions{Closed: true, Overwrite: true, Data: []byte("abc")}, nil},
		{"over a closed file, no overwrite", "/closed", namespace.CreateOptions{Closed: true}, namespace.ErrExists},
		{"over a file being written", "/open", namespace.CreateOptions{Closed: true, Overwrite: true}, namespace.ErrLeaseConflict},
		{"over a directory", "/d", namespace.CreateOptions{Closed: true, Overwrite: true}, namespace.ErrIsDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := namespace.DefaultConfig("super")
			cfg.InlineLimit = limit
			e := newEnvWith(t, cfg)
			e.tree("/d/", "/closed")
			if _, err := e.create(super, "/open", namespace.CreateOptions{Perm: 0o644, Holder: "h2"}); err != nil {
				t.Fatal(err)
			}
			o := tc.o
			o.Perm, o.Holder = 0o644, "h1"
			_, err := e.create(super, tc.path, o)
			wantErr(t, err, tc.err)
			e.check()
			if leases := allLeases(t, e); len(leases) != 1 {
				t.Fatalf("leases %v, want only /open's", leases)
			}
			if tc.err != nil {
				return
			}
			got, content, err := e.fs.Open(e.tx, super, dflt, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Holder != "" || got.Length != uint64(len(o.Data)) || got.Inline != (len(o.Data) > 0) ||
				string(content.Inline) != string(o.Data) || got.Mtime != e.now {
				t.Fatalf("after a closed create: %+v, content %+v", got, content)
			}
		})
	}
}
