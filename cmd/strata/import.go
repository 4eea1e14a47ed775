package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/stratafs/strata/internal/bulkload"
	"github.com/stratafs/strata/internal/fsimage"
	"github.com/stratafs/strata/internal/nsimport"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// importFlags are strata admin import's settings.
type importFlags struct {
	client            clientFlags
	mode, store       string
	syncInterval      int64
	workDir, timeZone string
	tableSize         string
	noDigest          bool
	replication       uint32
}

func importCmd() *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import IMAGE NAMESPACE",
		Short: "Import an HDFS namespace from its fsimage into a Strata namespace",
		Long: `Import the namespace an HDFS NameNode saved (its fsimage, or the text
'hdfs oiv -p Delimited' writes of it) into NAMESPACE: a namespace that does
not exist (created with --mode and --store) or an empty one.

What comes in: every file and directory the image's root reaches, with its
permission, owner, group, times, length, replication, block size, and the
quotas of directories. HDFS charges a space quota with each byte times its
replication, Strata with each byte once: a space quota comes in divided by
the cluster's default replication (--replication, its dfs.replication, which
an image does not record), so that it still holds the data it held.
Symbolic links do not (Strata has none): they are counted. Neither do the
inodes that only snapshots see.

Where the data is:
  --mode block (the default): metadata only. The files' bytes stay in HDFS:
      reading one fails, saying so, and every file with bytes is listed in
      WORK-DIR/unreachable.txt. (Copy the data with distcp into the
      namespace's files, or use cache mode over a copy.)
  --mode cache: the namespace is a view of --store, the bucket (or prefix)
      the files were copied to (distcp to s3a://bucket/prefix), each file at
      the key of its path; Strata checks an object against the bucket when
      a file is first read or listed.

How: the image is read in three passes and turned into sorted tables of the
namespace's records, the per-directory sums of du and count included, which
go to the namespace service's leader as they are built, then to every
member; one logged command then adds them all to each member's state in one
step. Until then nothing of the import is visible, and a failure, a kill or
a crash leaves the namespace empty. Run the same command again to go on:
WORK-DIR (default ./strata-import-NAMESPACE) holds the tables built so far,
and the leader keeps those it received.

An image is checked against the MD5 file HDFS writes beside it
(IMAGE.md5), when there is one, before anything is built; a corrupt or
truncated image is refused, naming the section and offset where it stops
reading as an image. The text form's times are to the minute, in the time
zone of the machine oiv ran on (--time-zone).`,
		Example: `  strata admin import /data/nn/current/fsimage_0000000000012345 warehouse --store file:///data/strata-bucket
  strata admin import fsimage.txt lake --mode cache --store 's3://lake/hdfs-copy?endpoint=http://minio:9000' --time-zone Asia/Shanghai`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "block", "block (metadata only; the data stays in HDFS) or cache (a view of --store, the bucket the files were copied to)")
	fl.StringVar(&f.store, "store", "", "the bucket of a namespace to create: file:///absolute/dir or s3://bucket/prefix")
	fl.Int64Var(&f.syncInterval, "sync-interval", 0, "cache mode: seconds what was loaded from the bucket is trusted (-1 for ever, 0 not at all)")
	fl.StringVar(&f.workDir, "work-dir", "", "where the tables are built, and what a run again goes on from (default ./strata-import-NAMESPACE)")
	fl.StringVar(&f.timeZone, "time-zone", "UTC", "text form: the time zone oiv wrote its times in (an IANA name, or Local)")
	fl.StringVar(&f.tableSize, "table-size", "256MiB", "the size at which a table is closed and the next begun")
	fl.BoolVar(&f.noDigest, "no-digest", false, "do not check the image against IMAGE.md5")
	fl.Uint32Var(&f.replication, "replication", bulkload.DefaultReplication, "the HDFS cluster's dfs.replication: space quotas are divided by it")
	f.client.register(cmd)
	return cmd
}

func (f *importFlags) run(cmd *cobra.Command, image, ns string) error {
	info, err := f.namespace(ns)
	if err != nil {
		return err
	}
	if f.replication == 0 || f.replication > 512 {
		return fmt.Errorf("--replication %d: HDFS's is 1 to 512", f.replication)
	}
	tableSize, err := parseBytes(f.tableSize)
	if err != nil || tableSize <= 0 {
		return fmt.Errorf("--table-size %q: not a size", f.tableSize)
	}
	if f.workDir == "" {
		f.workDir = "strata-import-" + ns
	}
	src, key, err := f.open(image)
	if err != nil {
		return err
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	c, err := f.client.client()
	if err != nil {
		return err
	}
	defer c.Close()
	show := newPhases()
	res, err := nsimport.Run(cmd.Context(), c, src, nsimport.Options{Namespace: info, WorkDir: f.workDir, Key: key,
		MetadataOnly: info.Mode != pb.NamespaceMode_NAMESPACE_MODE_CACHE, TableBytes: uint64(tableSize), Replication: f.replication, Progress: show.update})
	show.done()
	if err != nil {
		return fmt.Errorf("%w (what was done is kept in %s: run the same command again to go on)", err, f.workDir)
	}
	return printImport(cmd.OutOrStdout(), ns, res)
}

// namespace is what the namespace becomes if the import creates it.
func (f *importFlags) namespace(ns string) (*pb.NamespaceInfo, error) {
	m, ok := map[string]pb.NamespaceMode{"block": pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "cache": pb.NamespaceMode_NAMESPACE_MODE_CACHE}[f.mode]
	if !ok {
		return nil, fmt.Errorf("--mode must be block or cache, not %q", f.mode)
	}
	if m != pb.NamespaceMode_NAMESPACE_MODE_CACHE && f.syncInterval != 0 {
		return nil, fmt.Errorf("--sync-interval is for --mode cache only")
	}
	return &pb.NamespaceInfo{Name: ns, Mode: m, StoreUri: f.store, SyncInterval: f.syncInterval}, nil
}

// open opens the image, binary or text (told by its first bytes), checked
// against its MD5 file when it has one, and returns what names it.
func (f *importFlags) open(path string) (fsimage.Source, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	abs, _ := filepath.Abs(path)
	key := fmt.Sprintf("%s %d %d", abs, st.Size(), st.ModTime().UnixNano())
	head := make([]byte, 8)
	if r, err := os.Open(path); err == nil {
		io.ReadFull(r, head)
		r.Close()
	}
	if !bytes.Equal(head, []byte("HDFSIMG1")) {
		loc, err := time.LoadLocation(f.timeZone)
		if err != nil {
			return nil, "", fmt.Errorf("--time-zone: %w", err)
		}
		t, err := fsimage.OpenDelimited(path, loc)
		return t, key, err
	}
	if err := f.checkDigest(path, st.Size()); err != nil {
		return nil, "", err
	}
	im, err := fsimage.Open(path)
	return im, key, err
}

func (f *importFlags) checkDigest(path string, size int64) error {
	sum := fsimage.DigestPath(path)
	if _, err := os.Stat(sum); errors.Is(err, fs.ErrNotExist) || f.noDigest {
		if !f.noDigest {
			fmt.Fprintf(os.Stderr, "strata: %s has no MD5 file beside it (%s): its bytes are not checked\n", path, sum)
		}
		return nil
	}
	bar := newBar(size, "checking the image's MD5")
	err := fsimage.CheckDigest(path, sum, func(done int64) {
		if bar != nil {
			bar.Set64(done)
		}
	})
	if bar != nil {
		bar.Finish()
	}
	return err
}

// phases shows each phase's progress: a bar with its rate and ETA on a
// terminal, else a line every few seconds.
type phases struct {
	tty   bool
	phase string
	bar   *progressbar.ProgressBar
	last  time.Time
	start time.Time
}

func newPhases() *phases {
	return &phases{tty: term.IsTerminal(int(os.Stderr.Fd())) && os.Getenv("STRATA_NO_PROGRESS") == ""}
}

func (p *phases) update(pr nsimport.Progress) {
	if pr.Phase == "tables" {
		return
	}
	if pr.Phase != p.phase {
		p.done()
		p.phase, p.start = pr.Phase, time.Now()
		if p.tty && pr.Total > 0 {
			p.bar = progressbar.NewOptions64(int64(pr.Total), progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(pr.Phase), progressbar.OptionSetWidth(30), progressbar.OptionShowCount(),
				progressbar.OptionShowIts(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
	}
	if p.bar != nil {
		if int64(pr.Total) > p.bar.GetMax64() {
			p.bar.ChangeMax64(int64(pr.Total))
		}
		p.bar.Set64(int64(pr.Done))
		return
	}
	if !p.tty && time.Since(p.last) > 5*time.Second {
		p.last = time.Now()
		rate := float64(pr.Done) / max(time.Since(p.start).Seconds(), 1e-3)
		eta := "?"
		if pr.Total > pr.Done && rate > 0 {
			eta = time.Duration(float64(pr.Total-pr.Done) / rate * float64(time.Second)).Round(time.Second).String()
		}
		fmt.Fprintf(os.Stderr, "strata: %s: %d of %d (%.0f/s, ETA %s)\n", pr.Phase, pr.Done, pr.Total, rate, eta)
	}
}

func (p *phases) done() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

func printImport(w io.Writer, ns string, r *nsimport.Result) error {
	if r.Committed {
		_, err := fmt.Fprintf(w, "import %s into %s committed already (nothing to do)\n", r.ID, ns)
		return err
	}
	var b strings.Builder
	if r.Resumed {
		fmt.Fprintf(&b, "resumed import %s from its work directory\n", r.ID)
	}
	inodes := r.Files + r.Dirs
	fmt.Fprintf(&b, "imported into %s: %d files, %d directories, %s in %s (%.0f inodes/s)\n", ns, r.Files, r.Dirs,
		sizeText(r.Bytes), r.Elapsed.Round(time.Millisecond), float64(inodes)/max(r.Elapsed.Seconds(), 1e-3))
	if r.Symlinks > 0 {
		fmt.Fprintf(&b, "left out: %d symbolic links (Strata has none)\n", r.Symlinks)
	}
	if r.SnapshotOnly > 0 {
		fmt.Fprintf(&b, "left out: %d inodes only snapshots see\n", r.SnapshotOnly)
	}
	if r.SpaceQuotas > 0 {
		fmt.Fprintf(&b, "%d space quotas divided by %d (dfs.replication, --replication): HDFS counts bytes times replication, Strata once\n",
			r.SpaceQuotas, r.Replication)
	}
	if r.UnderConstruction > 0 {
		fmt.Fprintf(&b, "%d files were open for writing: they came in closed, at the length their blocks had\n", r.UnderConstruction)
	}
	if r.Unreachable > 0 {
		fmt.Fprintf(&b, "%d files have bytes the namespace cannot read (their data stayed in HDFS): listed in %s\n",
			r.Unreachable, r.UnreachableList)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
