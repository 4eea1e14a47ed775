package cache

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// What the cache holds is its owner's alone: directories 0700 and files
// 0600, its root under the configured directory too, even one an older
// worker made 0755.
func TestCacheFilesAreTheOwnersAlone(t *testing.T) {
	cfg := testConfig(t, 16)
	root := filepath.Join(cfg.Dirs[0].Path, formatDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Put("0123456789abcdef", 0, blockBytes("0123456789abcdef", 3*c.PageSize())); err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walk: %v, %d files", err, files)
	}
}
