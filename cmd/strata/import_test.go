package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/testcluster"
)

// The import's tests as a user runs it: strata admin import against real
// `strata meta` processes. (The comparison with what HDFS reports of a
// real image is java/bench's FsImageImportTest.)

const realImage = "../../internal/fsimage/testdata/fsimage"

// textImage writes the Delimited text of a tree of dirs directories of
// files files each, and returns its path: an image as large as a test
// wants, without HDFS.
func textImage(t *testing.T, dirs, files int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fsimage.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := func(p string, dir bool, i int) {
		if dir {
			fmt.Fprintf(w, "%s\t0\t2026-01-02 03:%02d\t1970-01-01 00:00\t0\t0\t0\t-1\t-1\tdrwxr-x---\thive\tetl\n", p, i%60)
			return
		}
		fmt.Fprintf(w, "%s\t3\t2026-01-02 04:%02d\t2026-01-03 05:06\t134217728\t1\t%d\t0\t0\t-rw-r--r--\tspark\tetl\n", p, i%60, i*37)
	}
	fmt.Fprintln(w, "Path\tReplication\tModificationTime\tAccessTime\tPreferredBlockSize\tBlocksCount\tFileSize\tNSQUOTA\tDSQUOTA\tPermission\tUserName\tGroupName")
	line("/", true, 0)
	// /db has HDFS's quotas: 3 TB of space at replication 3.
	fmt.Fprintf(w, "/db\t0\t2026-01-02 03:00\t1970-01-01 00:00\t0\t0\t0\t200000\t3000000000000\tdrwxr-x---\thive\tetl\n")
	for d := 0; d < dirs; d++ {
		line(fmt.Sprintf("/db/t%04d", d), true, d)
		for i := 0; i < files; i++ {
			line(fmt.Sprintf("/db/t%04d/part-%06d.parquet", d, i), false, i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// tree reads every entry of namespace ns, with its attributes and, for a
// directory, its content summary, one line each, by path.
func tree(t *testing.T, c *client.Client, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	err := c.Walk(ctx, "strata://"+ns+"/", func(st *client.FileStatus) error {
		line := fmt.Sprintf("dir=%v len=%d perm=%o %s:%s mtime=%d atime=%d repl=%d bs=%d", st.IsDir, st.Length, st.Perm,
			st.Owner, st.Group, st.ModTime.UnixMilli(), st.AccTime.UnixMilli(), st.Replication, st.BlockSize)
		if st.IsDir {
			sum, err := c.ContentSummary(ctx, "strata://"+ns+st.Path)
			if err != nil {
				return err
			}
			q := sum.Quota
			sum.Quota = nil
			line += fmt.Sprintf(" sum=%+v", *sum)
			if q != nil {
				line += fmt.Sprintf(" quota=%+v", *q)
			}
		}
		out[st.Path] = line
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportKilledAndResumed kills strata admin import (SIGKILL) once the
// leader holds some of its tables, finds nothing of it visible, runs it
// again, and gets what an import that was never killed gets.
func TestImportKilledAndResumed(t *testing.T) {
	meta := testcluster.Start(t, t.TempDir(), "meta")
	env := []string{"STRATA_META=" + meta.Addr}
	image := textImage(t, 40, 2500) // 100,000 files in tables of 64 KiB
	bucket := "file://" + t.TempDir()
	run := func(ns, work string) ran {
		return strata(t, 2*time.Minute, env, nil, "admin", "import", image, ns, "--store", bucket,
			"--work-dir", work, "--table-size", "64KiB")
	}
	whole := run("whole", filepath.Join(t.TempDir(), "w"))
	if whole.code != 0 {
		t.Fatalf("import: %s%s", whole.out, whole.err)
	}
	work := filepath.Join(t.TempDir(), "k")
	cmd := command(t, env, "admin", "import", image, "killed", "--store", bucket, "--work-dir", work, "--table-size", "64KiB")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the leader holds a table or two, the import is killed.
	deadline := time.Now().Add(time.Minute)
	for uploaded(t, meta.DataDir) < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the leader received no table within a minute")
		}
		time.Sleep(time.Millisecond) // polling the leader's directory, not waiting for an event
	}
	cmd.Process.Kill()
	cmd.Wait()
	c := testcluster.Client(t, meta.Addr, "")
	if _, err := c.Stat(context.Background(), "strata://killed/"); err == nil {
		t.Fatal("the killed import's namespace is visible")
	}
	r := run("killed", work)
	if r.code != 0 {
		t.Fatalf("resumed import: %s%s", r.out, r.err)
	}
	got, want := tree(t, c, "killed"), tree(t, c, "whole")
	if len(want) != 100_042 {
		t.Errorf("%d entries imported, want 100,042", len(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: resumed %q, whole %q", p, got[p], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entries resumed, %d whole", len(got), len(want))
	}
	if !strings.Contains(r.out, "100000 files, 42 directories") || !strings.Contains(r.out, "resumed import") {
		t.Errorf("output: %s", r.out)
	}
	// HDFS charged /db's space quota with bytes times replication, Strata
	// counts them once: divided by the default replication, 3.
	if !strings.HasSuffix(want["/db"], " quota={Names:200000 Space:1000000000000}") {
		t.Errorf("/db: %s", want["/db"])
	}
	for _, out := range []string{whole.out, r.out} {
		if !strings.Contains(out, "1 space quotas divided by 3") {
			t.Errorf("output: %s", out)
		}
	}
}

// uploaded counts the tables a member's data directory holds for imports.
func uploaded(t *testing.T, dataDir string) int {
	m, _ := filepath.Glob(filepath.Join(dataDir, "imports", "*", "*.sst"))
	return len(m)
}

// TestImportReachesEveryMember imports into a group of three, then reads
// each member's state as it lies on its disk: the namespace and its sums
// are in all three, and survive a member's kill -9.
func TestImportReachesEveryMember(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	env := []string{"STRATA_META=" + g.Meta()}
	r := strata(t, 2*time.Minute, env, nil, "admin", "import", realImage, "hdfs", "--store", "file://"+t.TempDir(),
		"--work-dir", filepath.Join(t.TempDir(), "w"))
	if r.code != 0 {
		t.Fatalf("import: %s%s", r.out, r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.CaughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	g.Kill(2)
	g.Start(2)
	if err := g.CaughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		g.Kill(i)
	}
	for i := 1; i <= 3; i++ {
		s, err := pebblekv.Open(filepath.Join(g.MemberDir(i), "state"), pebblekv.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		err = s.View(func(rd kv.Reader) error {
			v, ok, err := rd.Get(kvschema.NamespaceKey("hdfs"))
			if err != nil || !ok {
				return fmt.Errorf("no namespace record (%v)", err)
			}
			ns, err := kvschema.DecodeNamespace(v)
			if err != nil {
				return err
			}
			v, ok, err = rd.Get(kvschema.InodeKey(ns.Root))
			if err != nil || !ok {
				return fmt.Errorf("no root (%v)", err)
			}
			root, err := kvschema.DecodeInode(v)
			if err == nil && (root.SubFiles != 3003 || root.SubDirs != 141 || root.Children != 5) {
				err = fmt.Errorf("root %+v", root)
			}
			return err
		})
		s.Close()
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
}
