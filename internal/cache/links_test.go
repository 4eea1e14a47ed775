package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Symbolic links in a cache directory never take the cache's files
// elsewhere: the cache's own directory may not be a link (someone who can
// write where it is to be made could otherwise point it anywhere the
// worker's user may write), nor be another user's; a link in it where a
// subdirectory goes is removed at Open, and no data file or sidecar is
// opened through a link.

// outsideDir is a directory outside the cache holding a file, and what it
// looks like.
func outsideDir(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), blockBytes("secret", 3*testPS), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, describe(t, dir)
}

// describe is the mode of dir and the names in it.
func describe(t *testing.T, dir string) string {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	desc := fi.Mode().String()
	for _, n := range names {
		desc += " " + n.Name()
	}
	return desc
}

func TestCacheRootIsNoLink(t *testing.T) {
	outside, before := outsideDir(t)
	cfg := testConfig(t, 100)
	if err := os.Symlink(outside, filepath.Join(cfg.Dirs[0].Path, formatDir)); err != nil {
		t.Fatal(err)
	}
	if c, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Open of a cache whose directory is a link: %v", err)
		if err == nil {
			mustPut(t, c, "k", blockBytes("k", testPS), 0)
			c.Close()
		}
	}
	if after := describe(t, outside); after != before {
		t.Errorf("outside the cache, %q became %q", before, after)
	}
}

func TestCacheRootIsTheWorkersOwn(t *testing.T) {
	cfg := testConfig(t, 100)
	mustOpen(t, cfg).Close()
	defer func(f func() int) { owner = f }(owner)
	owner = func() int { return os.Geteuid() + 1 } // as if another user had made it
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "owned by") {
		t.Errorf("Open of a cache directory another user owns: %v", err)
	}
}

func TestCacheSubdirectoriesAreNoLinks(t *testing.T) {
	outside, before := outsideDir(t)
	cfg := testConfig(t, 1000)
	mustOpen(t, cfg).Close()
	root := filepath.Join(cfg.Dirs[0].Path, formatDir)
	for i := range 256 {
		if err := os.Symlink(outside, filepath.Join(root, hex2(i))); err != nil {
			t.Fatal(err)
		}
	}
	c := mustOpen(t, cfg)
	defer c.Close()
	for _, key := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		data := blockBytes(key, 2*testPS)
		mustPut(t, c, key, data, 0)
		checkRead(t, c, key, int64(len(data)), 0, int64(len(data)))
	}
	if after := describe(t, outside); after != before {
		t.Errorf("outside the cache, %q became %q", before, after)
	}
}

func TestCacheFilesAreNoLinks(t *testing.T) {
	outside, _ := outsideDir(t)
	secret := filepath.Join(outside, "secret")
	was, _ := os.ReadFile(secret)
	cfg := testConfig(t, 1000)
	c := mustOpen(t, cfg)
	data := blockBytes("k", 3*testPS)
	putPages(t, c, "k", int64(len(data)), 0, 1)
	dataFile := c.testBlock("k").dataPath()
	c.Close()
	if err := os.Remove(dataFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, dataFile); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, cfg)
	defer c.Close()
	_ = c.Put("k", testPS, data[testPS:])
	if now, _ := os.ReadFile(secret); !bytes.Equal(now, was) {
		t.Error("a Put wrote through a linked data file, outside the cache")
	}
	if n, err := c.ReadAt("k", make([]byte, testPS), 0); err == nil {
		t.Errorf("read %d bytes through a linked data file", n)
	}
}

func hex2(i int) string { return string("0123456789abcdef"[i>>4]) + string("0123456789abcdef"[i&15]) }
