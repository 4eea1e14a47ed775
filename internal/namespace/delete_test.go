package namespace_test

import (
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func TestDelete(t *testing.T) {
	for _, tc := range []struct {
		name      string
		path      string
		recursive bool
		want      bool
		err       error
	}{
		{"file", "/d/f", false, true, nil},
		{"file, recursive", "/d/f", true, true, nil},
		{"file being written", "/d/open", false, true, nil},
		{"empty directory", "/d/empty", false, true, nil},
		{"non-empty directory", "/d", false, false, namespace.ErrNotEmpty},
		{"directory with one entry", "/d/sub", false, false, namespace.ErrNotEmpty},
		{"non-empty directory, recursive", "/d", true, true, nil},
		{"missing", "/d/nope", false, false, nil},
		{"missing parent", "/nope/nope", true, false, nil},
		{"under a file", "/d/f/x", true, false, nil},
		{"root", "/", true, false, namespace.ErrRoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.tree("/d/f", "/d/empty/", "/d/sub/g")
			if _, err := e.create(super, "/d/open", namespace.CreateOptions{Holder: "h"}); err != nil {
				t.Fatal(err)
			}
			before := e.summary("/")
			got, err := e.delete(super, tc.path, tc.recursive)
			wantErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("deleted = %v, want %v", got, tc.want)
			}
			e.check()
			if !got {
				if e.summary("/") != before {
					t.Fatalf("summary changed from %+v to %+v", before, e.summary("/"))
				}
				return
			}
			if e.exists(tc.path) {
				t.Fatalf("%s still exists", tc.path)
			}
			if p := parentOf(tc.path); e.stat(p).Mtime != e.now {
				t.Fatalf("%s: mtime not updated", p)
			}
			if tc.path == "/d/open" && len(allLeases(t, e)) != 0 {
				t.Fatal("the deleted file's lease remains")
			}
			e.purgeAll(3)
			e.check()
			if s, _ := readRaw(e.tx); len(s.inodes) != int(e.summary("/").Files+e.summary("/").Dirs) {
				t.Fatalf("%d inodes for %+v", len(s.inodes), e.summary("/"))
			}
		})
	}
}

// A recursive delete of a big tree is one small command; Purge then
// removes the subtree in bounded steps until no record of it remains.
func TestDeleteBigTreeAndPurge(t *testing.T) {
	e := newEnv(t)
	e.tree("/keep/k", "/big/")
	const fanout = 6
	var blockID uint64
	for i := range fanout {
		for j := range fanout {
			dir := fmt.Sprintf("/big/d%d/e%d", i, j)
			e.mkdir(dir)
			for k := range 3 {
				p := fmt.Sprintf("%s/f%d", dir, k)
				n, err := e.create(super, p, namespace.CreateOptions{Holder: "h"})
				if err != nil {
					t.Fatal(err)
				}
				if k == 2 {
					continue // left open
				}
				o := namespace.CompleteOptions{Inode: n.ID, Holder: "h", Length: 3, Inline: true, Data: []byte("abc")}
				if k == 0 {
					blockID++
					o = namespace.CompleteOptions{Inode: n.ID, Holder: "h", Length: 10,
						Blocks: []kvschema.Block{{ID: blockID, Length: 10}}}
				}
				if err := e.complete(super, p, o); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	subtree := inodesUnder(t, e, "/big")
	before := e.summary("/")
	big := e.summary("/big")
	if big.Files != fanout*fanout*3 || big.Dirs != 1+fanout+fanout*fanout {
		t.Fatalf("summary of /big %+v", big)
	}

	e.now++
	ov := kv.NewOverlay(e.tx)
	if ok, err := e.fs.Delete(ov, e.now, super, dflt, "/big", true); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ov.Len() > 8 {
		t.Fatalf("the delete wrote %d keys; it must not walk the subtree", ov.Len())
	}
	ov.ApplyTo(e.tx)
	after := e.summary("/")
	if after.Files != before.Files-big.Files || after.Dirs != before.Dirs-big.Dirs || after.Length != before.Length-big.Length {
		t.Fatalf("summary after delete %+v, before %+v, deleted %+v", after, before, big)
	}
	if e.exists("/big") {
		t.Fatal("/big still exists")
	}
	e.check()

	calls := e.purgeAll(7)
	if want := len(subtree) / 7; calls < want {
		t.Fatalf("purged %d inodes in %d calls of at most 7", len(subtree), calls)
	}
	e.check()
	s, err := readRaw(e.tx)
	if err != nil {
		t.Fatal(err)
	}
	for id := range subtree {
		if s.inodes[id] != nil || s.dentries[id] != nil || s.inline[id] != nil || s.blocks[id] != nil {
			t.Fatalf("records of purged inode %d remain", id)
		}
	}
	for l := range s.leases {
		if subtree[l.ino] {
			t.Fatalf("lease %+v of a purged file remains", l)
		}
	}
	if len(s.garbage) != int(blockID) {
		t.Fatalf("%d blocks in the garbage queue, want %d", len(s.garbage), blockID)
	}
	if got := e.summary("/"); got != after {
		t.Fatalf("purge changed the summary to %+v", got)
	}
	if n := e.purge(7); n != 0 {
		t.Fatalf("purge with nothing pending removed %d", n)
	}
}

// inodesUnder returns the ids of path and everything below it.
func inodesUnder(t *testing.T, e *env, path string) map[uint64]bool {
	t.Helper()
	s, err := readRaw(e.tx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	var walk func(id uint64)
	walk = func(id uint64) {
		ids[id] = true
		for _, d := range s.dentries[id] {
			walk(d.Child)
		}
	}
	walk(e.stat(path).ID)
	return ids
}
