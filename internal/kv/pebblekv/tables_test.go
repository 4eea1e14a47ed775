package pebblekv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/stratafs/strata/internal/kv"
)

func writeTable(t *testing.T, path string, keys ...string) {
	t.Helper()
	w, err := CreateTable(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := w.Set([]byte(k), []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIngestTablesAndOverlay: tables and an overlay's writes land together;
// the overlay's keys may fall before, between and after the tables, and
// its deletions delete; what the hot cache held before is not served.
func TestIngestTablesAndOverlay(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "state"), 1<<20)
	defer s.Close()
	ov := kv.NewOverlay(s.Writer())
	ov.Set([]byte("a"), []byte("old"))
	ov.Set([]byte("z"), []byte("gone"))
	if err := s.Commit(ov, true); err != nil {
		t.Fatal(err)
	}
	// Cache "d" missing and "a" old.
	_ = s.View(func(r kv.Reader) error { r.Get([]byte("d")); r.Get([]byte("a")); return nil })
	t1, t2 := filepath.Join(dir, "t1.sst"), filepath.Join(dir, "t2.sst")
	writeTable(t, t1, "c", "d", "e")
	writeTable(t, t2, "m", "n")
	var seen []string
	if err := VerifyTable(t1, func(k, v []byte) error { seen = append(seen, string(k)+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[c=vc d=vd e=ve]" {
		t.Errorf("verify saw %v", seen)
	}
	ov = kv.NewOverlay(s.Writer())
	ov.Set([]byte("a"), []byte("new"))
	ov.Set([]byte("f"), []byte("between"))
	ov.Delete([]byte("z"))
	if err := s.Ingest([]string{t1, t2}, ov); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "new", "c": "vc", "d": "vd", "e": "ve", "f": "between", "m": "vm", "n": "vn"}
	got := map[string]string{}
	_ = s.View(func(r kv.Reader) error {
		return r.Scan(nil, nil, func(k, v []byte) bool { got[string(k)] = string(v); return true })
	})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the ingest %v, want %v", got, want)
	}
	_ = s.View(func(r kv.Reader) error {
		if v, ok, _ := r.Get([]byte("d")); !ok || string(v) != "vd" {
			t.Errorf("d: %q %v (a stale cached miss?)", v, ok)
		}
		return nil
	})
	if _, err := os.Stat(t1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the table is still at its path: %v", err)
	}
}

// TestIngestRefusesAWriteInsideATable: the overlay's key inside a table's
// range would make the ingest's files overlap.
func TestIngestRefusesAWriteInsideATable(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "state"), 1<<20)
	defer s.Close()
	t1 := filepath.Join(dir, "t1.sst")
	writeTable(t, t1, "c", "e")
	ov := kv.NewOverlay(s.Writer())
	ov.Set([]byte("d"), []byte("x"))
	if err := s.Ingest([]string{t1}, ov); err == nil {
		t.Fatal("ingested a write inside a table")
	}
}

// TestVerifyRefusesDeletions: a table with a deletion or a range deletion
// (written here with pebble's writer directly, as an attacker would) is
// refused, and so is a file that is no table.
func TestVerifyRefusesDeletions(t *testing.T) {
	dir := t.TempDir()
	for name, write := range map[string]func(w *sstable.Writer) error{
		"delete":      func(w *sstable.Writer) error { return w.Delete([]byte("a")) },
		"rangedelete": func(w *sstable.Writer) error { return w.DeleteRange([]byte("a"), []byte("z")) },
	} {
		p := filepath.Join(dir, name)
		f, err := vfs.Default.Create(p, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		o := options(stateMemTable)
		w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), o.MakeWriterOptions(6, pebble.FormatMinSupported.MaxTableFormat()))
		if err := errors.Join(write(w), w.Close()); err != nil {
			t.Fatal(err)
		}
		if err := VerifyTable(p, func(k, v []byte) error { return nil }); !errors.Is(err, ErrBadTable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a table at all, not a table at all, not a table at all"), 0o600)
	if err := VerifyTable(junk, func(k, v []byte) error { return nil }); !errors.Is(err, ErrBadTable) {
		t.Errorf("junk: %v", err)
	}
}
