package main_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
)

// A cache-mode namespace over a local directory that holds symbolic links,
// as the attacker of issue 32 made it (ln -s / dir/root_link), against a
// real `strata server --dev`: what a user gets is "No such file or
// directory", never a byte from outside the directory, and no command
// copies anything in from outside, or moves or deletes anything there.
// Creating the namespace writes nothing into the directory, and deleting
// it says that the objects stay.
func TestCacheModeLinksLeadNowhere(t *testing.T) {
	ctx := testContext(t)
	data := t.TempDir()
	meta := "--meta=" + testcluster.StartDev(t, data).Addr
	lake, outside := filepath.Join(t.TempDir(), "lake"), t.TempDir()
	writeLocal(t, filepath.Join(lake, "sub", "a.txt"), "inside a")
	writeLocal(t, filepath.Join(outside, "secret"), "outside secret")
	writeLocal(t, filepath.Join(outside, "d", "s"), "outside s")
	for at, target := range map[string]string{"root_link": "/", "out_link": outside, "sub/inner_link": outside,
		"file_link": filepath.Join(outside, "secret"), "loop_a": "loop_b", "loop_b": "loop_a"} {
		if err := os.Symlink(target, filepath.Join(lake, at)); err != nil {
			t.Fatal(err)
		}
	}
	strataCLI(ctx, t, "admin", "ns", "create", meta, "lake", "--mode", "cache", "--store", "file://"+lake).want(t, 0, "", "")
	if _, err := os.Lstat(filepath.Join(lake, ".strata-tmp")); err == nil {
		t.Error("creating the namespace wrote .strata-tmp into its bucket")
	}
	fs := func(args ...string) cliResult { return strataCLI(ctx, t, append([]string{"fs", meta}, args...)...) }
	missing := func(cmd, path string) string { return q(cmd+": `"+path+"': No such file or directory") + "\n" }
	for _, p := range []string{"strata://lake/root_link" + data + "/token", "strata://lake/root_link/etc/passwd",
		"strata://lake/file_link", "strata://lake/sub/inner_link/secret", "strata://lake/loop_a/x"} {
		fs("-cat", p).want(t, 1, "", missing("cat", p))
	}
	fs("-ls", "strata://lake/").want(t, 0, `Found 1 items\n`+`d\S+\s+- \S+ \S+\s+0 \S+ \S+ `+q("strata://lake/sub")+"\n", "")
	for _, p := range []string{"strata://lake/root_link/", "strata://lake/out_link", "strata://lake/loop_a"} {
		fs("-ls", p).want(t, 1, "", missing("ls", p))
	}
	got := filepath.Join(t.TempDir(), "got")
	fs("-get", "strata://lake/out_link/secret", got).want(t, 1, "", missing("get", "strata://lake/out_link/secret"))
	if _, err := os.Lstat(got); err == nil {
		t.Error("-get through a link made a local file")
	}
	fs("-mv", "strata://lake/out_link", "strata://lake/stolen").want(t, 1, "", missing("mv", "strata://lake/out_link"))
	fs("-mv", "strata://lake/sub", "strata://lake/moved").want(t, 0, "", "")
	fs("-cat", "strata://lake/moved/a.txt").want(t, 0, "inside a", "")
	if files := regularFiles(t, lake); strings.Join(files, " ") != "moved/a.txt" {
		t.Errorf("the bucket holds %q; want moved/a.txt alone", files)
	}
	if files := regularFiles(t, outside); strings.Join(files, " ") != "d/s secret" {
		t.Errorf("outside the bucket: %q; want d/s and secret as they were", files)
	}
	strataCLI(ctx, t, "admin", "ns", "delete", meta, "--force", "--skip-trash", "lake").want(t, 0,
		q("Deleting namespace lake: ")+`.*\n`+q("Deleted namespace lake for good: ")+`.*`+
			q("; its bucket keeps every object (a cache-mode namespace's are never deleted).")+"\n", "")
	if files := regularFiles(t, lake); strings.Join(files, " ") != "moved/a.txt" {
		t.Errorf("after the namespace's deletion, the bucket holds %q", files)
	}
}

func writeLocal(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// regularFiles lists the regular files below dir (not following links),
// but for Strata's temp files.
func regularFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && !strings.Contains(p, ".strata-tmp") {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A block-mode bucket on a local directory is the same store: with its
// blocks/ a link to a copy elsewhere, an append writes no block through it
// (the append fails) and nothing lands outside the bucket.
func TestBlockModeBucketLinkTakesNoBlocks(t *testing.T) {
	ctx := testContext(t)
	data := t.TempDir()
	meta := "--meta=" + testcluster.StartDev(t, data).Addr
	strataCLI(ctx, t, "fs", meta, "-put", localFile(t, 64<<10), "/f").want(t, 0, "", "")
	blocks, outside := filepath.Join(data, "bucket", "blocks"), filepath.Join(t.TempDir(), "blocks")
	if err := os.Rename(blocks, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, blocks); err != nil {
		t.Fatal(err)
	}
	before := regularFiles(t, outside)
	if len(before) == 0 {
		t.Fatal("the put stored no block")
	}
	r := strataCLI(ctx, t, "fs", meta, "-appendToFile", localFile(t, 64<<10), "/f")
	if r.code == 0 || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("an append with the bucket's blocks/ a link: exit %d, %s", r.code, r.stderr)
	}
	if after := regularFiles(t, outside); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("blocks written outside the bucket: %q, before %q", after, before)
	}
}
