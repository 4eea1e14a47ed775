package scalebench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/cputime"
	"github.com/stratafs/strata/internal/nsimport"
	"github.com/stratafs/strata/internal/procgroup"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Config is one run of the benchmark.
type Config struct {
	// Binary is the strata binary: the member, and the CLI that lists.
	Binary string
	// Dir holds the member's data and the imports' work directories; it
	// must not exist, and goes at the end unless Keep.
	Dir string
	// Sizes are the files the member holds at each measurement, ascending
	// (0: the empty member).
	Sizes []uint64
	// Threads and Probe size the metadata phases: Probe operations of
	// each of Ops, split among Threads threads.
	Threads, Probe int
	Ops            []metabench.Op
	// MetaArgs are more flags for strata meta (its caches and memory).
	MetaArgs []string
	// DropCaches measures a restart with the page cache dropped too (it
	// writes /proc/sys/vm/drop_caches: root only, and the whole machine's
	// cache goes).
	DropCaches bool
	// TableBytes sizes the imports' tables.
	TableBytes uint64
	Keep       bool
	Log        io.Writer
}

// Row is what was measured at one size.
type Row struct {
	Files, Inodes uint64 // in the member
	// Import is the import that brought the member to this size.
	Import Import
	Ops    map[metabench.Op]metabench.Result
	// OpCPU is the member's CPU time during each phase: what an operation
	// costs the service, steadier than the rate on a busy machine.
	OpCPU map[metabench.Op]time.Duration
	// RSS is the member's resident memory after the probes, Disk its data
	// directory's bytes (state and log).
	RSS, Disk uint64
	// Restarts: SIGTERM then start, kill -9 then start, and (DropCaches)
	// kill -9 with the page cache dropped; each to the first answer.
	Clean, Killed, Cold time.Duration
	// LsR is `strata fs -ls -R` of the big table (its lines in LsRLines),
	// with its output; Count `strata fs -count` of CountPath.
	LsR       time.Duration
	LsRLines  uint64
	Count     time.Duration
	CountPath string
	CountOf   uint64
}

// Import is one import's measurement.
type Import struct {
	Inodes  uint64
	Elapsed time.Duration
	CPU     time.Duration // this process's: the build's and the upload's
}

// Run runs the benchmark and returns a row for each size.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if _, err := os.Stat(cfg.Dir); err == nil {
		return nil, fmt.Errorf("scalebench: %s exists: give a new directory", cfg.Dir)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(cfg.Dir)
	}
	g, err := procgroup.Start(ctx, procgroup.Config{Binary: cfg.Binary, Dir: cfg.Dir, Members: 1, Args: cfg.MetaArgs})
	if err != nil {
		return nil, err
	}
	defer g.Stop()
	r := &runner{cfg: cfg, g: g}
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	defer func() { r.c.Close() }()
	var rows []Row
	for i, size := range cfg.Sizes {
		row, err := r.grow(ctx, i, size)
		if err != nil {
			return rows, err
		}
		if err := r.measure(ctx, &row); err != nil {
			return rows, err
		}
		rows = append(rows, row)
		fmt.Fprintln(cfg.Log, Format(rows[len(rows)-1:]))
	}
	return rows, nil
}

// runner is a run's state.
type runner struct {
	cfg   Config
	g     *procgroup.Group
	c     *client.Client
	files uint64 // in the member
	// Where the samples are, once imported.
	tableNS, dbNS string
	tableFiles    uint64
	dbFiles       uint64
}

func (r *runner) connect(ctx context.Context) error {
	tok, err := r.g.AdminToken(ctx)
	if err != nil {
		return err
	}
	r.c, err = client.New(client.Config{Meta: r.g.Meta(), Token: tok})
	return err
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "scale: "+format+"\n", args...)
}

// The seed's samples.
const (
	sampleTable = 2_700_000
	sampleDB    = 18_000_000
)

// grow imports a tree of the files the member lacks to hold size, into a
// namespace of its own, the samples in the first tree they fit in.
func (r *runner) grow(ctx context.Context, i int, size uint64) (Row, error) {
	row := Row{Files: size}
	if size <= r.files {
		return row, nil
	}
	t := Tree{Files: size - r.files, Seed: uint64(i) + 1}
	if r.tableNS == "" && t.Files >= sampleTable+1000 {
		t.BigTable, r.tableFiles = sampleTable, sampleTable/154*154
	}
	if r.dbNS == "" && t.Files >= sampleDB+t.BigTable+1000 {
		t.BigDB = sampleDB
	}
	tree := NewTree(t)
	ns := fmt.Sprintf("scale%d", i)
	r.logf("importing %d inodes (the tree of %d files) into %s", tree.Count(), size-r.files, ns)
	work := filepath.Join(r.cfg.Dir, "import-"+ns)
	cpu0, start := cputime.Process(), time.Now()
	last := time.Now()
	res, err := nsimport.Run(ctx, r.c, tree, nsimport.Options{WorkDir: work, Key: ns, MetadataOnly: false,
		Namespace:  &pb.NamespaceInfo{Name: ns, Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + filepath.Join(r.cfg.Dir, "bucket")},
		TableBytes: r.cfg.TableBytes, Progress: func(p nsimport.Progress) {
			if time.Since(last) > 10*time.Second {
				last = time.Now()
				r.logf("  %s: %d of %d", p.Phase, p.Done, p.Total)
			}
		}})
	if err != nil {
		return row, err
	}
	row.Import = Import{Inodes: res.Files + res.Dirs, Elapsed: time.Since(start), CPU: cputime.Process() - cpu0}
	r.files = size
	if t.BigTable > 0 {
		r.tableNS = ns
	}
	if t.BigDB > 0 {
		r.dbNS, r.dbFiles = ns, t.BigDB
	}
	r.logf("imported %d inodes in %v", row.Import.Inodes, row.Import.Elapsed.Round(time.Millisecond))
	return row, os.RemoveAll(work)
}
