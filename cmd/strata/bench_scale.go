package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/bench/scalebench"
)

const benchScaleLong = `Fill one namespace service member (a strata meta process) to each of
--sizes files through the import path (strata admin import's: sorted tables
ingested whole) with synthetic trees shaped as seed 002's warehouse (paths 5
to 7 deep, leaf directories of 10 to 100,000 files, the seed's file sizes;
the first tree that can hold them has a table of 2.7 million files in 154
partitions and a database of 18 million files in 500,000 directories), and
measure at each size:

  import/s, import cpu µs  the import that brought the member there: inodes
                           a second, and this process's CPU an inode
  create/s ... delete/s    strata bench meta's phases, --threads threads,
                           --probe operations each, in a directory of their own
  create cpu µs, stat ...  the member's CPU time an operation of the phase:
                           what it costs the service, steadier than the rate
                           on a busy machine
  RSS, disk                the member's resident memory after the phases, its
                           data directory's bytes; and each per inode
  restart, kill -9, cold   from the start of the member to its first answer,
                           after SIGTERM, after kill -9, and after kill -9 with
                           the page cache dropped (--drop-caches, root)
  ls -R, lines             strata fs -ls -R of the 2.7M-file table, its output
                           read as it comes
  count, of                strata fs -count of the 18M-file database (before it
                           exists, of the largest namespace)

It prints the table as each size is measured, and with --doc writes it, with a
projection to a billion files, to the bench-scale section of that file. What it
writes goes to --dir (under /tmp, or .cache), removed at the end: the member
holds about 55 bytes an inode (5.5 GB at 100 million), and while an import
runs its work directory and the member's staged copy of its tables take
several times that of the inodes it brings (a 40-million-file step did not
fit in the 16 GB this machine had free): check the disk before the sizes.`

func benchScaleCmd() *cobra.Command {
	var sizes, ops, dir, doc, tableSize string
	var threads, probe int
	var dropCaches, keep bool
	var metaArgs []string
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Fill one member to 100 million files through the import path, and measure it at each size",
		Long:  benchScaleLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sz, err := parseCounts(sizes)
			if err != nil {
				return err
			}
			opList, err := metabench.ParseOps(ops)
			if err != nil {
				return err
			}
			ts, err := parseBytes(tableSize)
			if err != nil || ts <= 0 {
				return fmt.Errorf("--table-size %q: not a size", tableSize)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join(os.TempDir(), fmt.Sprintf("strata-bench-scale-%d", os.Getpid()))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg := scalebench.Config{Binary: self, Dir: dir, Sizes: sz, Threads: threads, Probe: probe, Ops: opList,
				MetaArgs: metaArgs, DropCaches: dropCaches, TableBytes: uint64(ts), Keep: keep, Log: cmd.ErrOrStderr()}
			start := time.Now()
			rows, err := scalebench.Run(ctx, cfg)
			if len(rows) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s", scalebench.Format(rows), scalebench.Projection(rows))
			}
			if err != nil {
				return err
			}
			if doc != "" {
				return writeScaleDoc(doc, cmd, rows, time.Since(start))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sizes, "sizes", "0,10M,50M,100M", "files the member holds at each measurement (k, M, G suffixes)")
	fl.StringVar(&ops, "ops", "create,stat,open,rename,delete", "the metadata phases of each probe")
	fl.IntVar(&threads, "threads", 64, "threads of the metadata phases")
	fl.IntVar(&probe, "probe", 100_000, "operations of each metadata phase")
	fl.StringVar(&dir, "dir", "", "where the member's data and the imports go (must not exist; default under $TMPDIR)")
	fl.StringVar(&doc, "doc", "", "write the table and the projection to this file's bench-scale section (docs/benchmarks.md)")
	fl.StringVar(&tableSize, "table-size", "256MiB", "size of the imports' tables")
	fl.StringArrayVar(&metaArgs, "meta-arg", nil, "a flag for the member (repeat: --meta-arg=--hot-cache=512MiB)")
	fl.BoolVar(&dropCaches, "drop-caches", false, "also time a restart with the page cache dropped (root; empties the whole machine's cache)")
	fl.BoolVar(&keep, "keep", false, "leave --dir in place")
	return cmd
}

// parseCounts parses "0,10M,50M,100M": counts with k, M or G (powers of
// ten), ascending.
func parseCounts(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := uint64(1)
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1e3, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "M"):
			mult, f = 1e6, strings.TrimSuffix(f, "M")
		case strings.HasSuffix(f, "G"):
			mult, f = 1e9, strings.TrimSuffix(f, "G")
		}
		var n uint64
		if _, err := fmt.Sscanf(f, "%d", &n); err != nil {
			return nil, fmt.Errorf("--sizes: %q is not a count", f)
		}
		if len(out) > 0 && n*mult < out[len(out)-1] {
			return nil, errors.New("--sizes must ascend")
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// writeScaleDoc replaces the bench-scale section of doc with the table and
// the projection.
func writeScaleDoc(doc string, cmd *cobra.Command, rows []scalebench.Row, took time.Duration) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	const begin, end = "<!-- bench-scale:begin (written by strata bench scale --doc; edits up to the end marker are lost on the next run) -->", "<!-- bench-scale:end -->"
	var sec bytes.Buffer
	fmt.Fprintf(&sec, "%s\n\n```\nstrata bench scale %s\n```\n\n", begin, strings.Join(os.Args[3:], " "))
	fmt.Fprintf(&sec, "%s, revision %s, %s. Machine: %s.\n\n```\n%s```\n\n%s\n%s", time.Now().UTC().Format("2006-01-02"), revision,
		took.Round(time.Minute), benchkit.DescribeMachine().String(), scalebench.Format(rows), scalebench.Projection(rows), end)
	text := string(b)
	i, j := strings.Index(text, "<!-- bench-scale:begin"), strings.Index(text, end)
	if i < 0 || j < i {
		text += "\n" + sec.String() + "\n"
	} else {
		text = text[:i] + sec.String() + text[j+len(end):]
	}
	return os.WriteFile(doc, []byte(text), 0o644)
}
