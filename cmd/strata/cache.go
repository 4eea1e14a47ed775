package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// The cache commands, as JindoFS and Alluxio users know them: load a
// subtree's metadata or data, drop its data, resync it with its bucket.

func loadCmd() *cobra.Command {
	var f clientFlags
	var metadata bool
	var parallel int
	cmd := &cobra.Command{
		Use:   "load PATH",
		Short: "Bring a subtree's data (or, with --metadata, its listing) into Strata's caches",
		Long: `Load walks PATH and brings every file's blocks into the cache of its home
worker (the one readers go to), --parallel files at a time, with a progress
bar on a terminal. Blocks cached already cost nothing, so a load that stopped
resumes by running it again.

With --metadata it only walks: in a cache-mode namespace each directory's
listing is loaded from the bucket (by the namespace's sync policy), so that
later listings, stats, du and count answer from Strata without asking the
bucket.

Works in block-mode namespaces too (their blocks are loaded the same way).

Loading data is a superuser's operation (the workers ask for a block token
that the namespace service issues to a superuser only); --metadata is a
walk, which anyone may run on what they may list.`,
		Example: `  strata admin load strata://lake/tables/sales
  strata admin load --metadata strata://lake/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			if metadata {
				return loadMetadata(cmd.Context(), c, args[0])
			}
			return eachFile(cmd.Context(), c, args[0], max(parallel, 1), "load", c.LoadFile)
		},
	}
	cmd.Flags().BoolVar(&metadata, "metadata", false, "load the subtree's listing only, not its data")
	cmd.Flags().IntVar(&parallel, "parallel", 8, "files loaded at once")
	f.register(cmd)
	return cmd
}

func uncacheCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "uncache PATH",
		Short: "Drop a subtree's data from every worker's cache",
		Long: `Uncache walks PATH and drops every file's blocks from the cache of every live
worker. The data stays in the bucket; the next read fetches it again.
A superuser's operation, as load is.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return eachFile(cmd.Context(), c, args[0], 8, "uncache", c.UncacheFile)
		},
	}
	f.register(cmd)
	return cmd
}

func syncCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "sync PATH",
		Short: "Check a cache-mode subtree against its bucket again",
		Long: `Sync makes a cache-mode namespace forget that it checked PATH, and everything
below it, against its bucket: the next access to each path asks the bucket
again, whatever the namespace's sync interval (with -1, this is the only way
to see what other tools changed in the bucket). It changes one record, so it
is instant for any subtree; follow it with 'strata admin load --metadata PATH'
to reload the subtree at once.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.Resync(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Printf("%s: %d entries to check against the bucket on their next access\n", args[0], n)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// loadMetadata walks path, which loads each directory's listing.
func loadMetadata(ctx context.Context, c *client.Client, path string) error {
	start := time.Now()
	bar := newBar(-1, "metadata")
	var entries, dirs int64
	err := c.Walk(ctx, path, func(st *client.FileStatus) error {
		entries++
		if st.IsDir {
			dirs++
		}
		if bar != nil {
			_ = bar.Add(1)
		}
		return nil
	})
	if bar != nil {
		_ = bar.Clear()
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d entries (%d directories) loaded in %s\n", path, entries, dirs, time.Since(start).Round(time.Millisecond))
	return nil
}

// eachFile walks path and calls fn for every file, parallel at a time,
// with a progress bar of the files' bytes, then prints a summary.
func eachFile(ctx context.Context, c *client.Client, path string, parallel int, verb string,
	fn func(context.Context, string) (client.CacheReport, error)) error {
	start := time.Now()
	total := int64(-1)
	if sum, err := c.ContentSummary(ctx, path); err == nil {
		total = int64(sum.Length)
	}
	bar := newBar(total, verb)
	var sum struct {
		sync.Mutex
		files                           int64
		bytes, cached, fetched, dropped uint64
		errs                            []error
	}
	var failed atomic.Bool
	files := make(chan string)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range files {
				rep, err := fn(ctx, p)
				sum.Lock()
				sum.files++
				sum.bytes += rep.Bytes
				sum.cached += rep.Cached
				sum.fetched += rep.Fetched
				sum.dropped += rep.Dropped
				if err != nil {
					sum.errs = append(sum.errs, fmt.Errorf("%s: %w", p, err))
					failed.Store(true)
				}
				sum.Unlock()
				if bar != nil {
					_ = bar.Add64(int64(rep.Bytes))
				}
			}
		}()
	}
	werr := c.Walk(ctx, path, func(st *client.FileStatus) error {
		if failed.Load() {
			return fmt.Errorf("stopped after a failure")
		}
		if !st.IsDir {
			files <- within(path, st.Path)
		}
		return nil
	})
	close(files)
	wg.Wait()
	if bar != nil {
		_ = bar.Clear()
	}
	took := time.Since(start).Round(time.Millisecond)
	switch verb {
	case "load":
		fmt.Printf("%s: %d files, %s: %s fetched from the bucket, %s cached already, in %s\n", path, sum.files,
			sizeText(sum.bytes), sizeText(sum.fetched), sizeText(sum.cached), took)
	default:
		fmt.Printf("%s: %d files, %s: %d cached blocks dropped, in %s\n", path, sum.files, sizeText(sum.bytes), sum.dropped, took)
	}
	if len(sum.errs) > 0 {
		for _, err := range sum.errs {
			fmt.Fprintln(os.Stderr, "strata admin "+verb+":", err)
		}
		return fmt.Errorf("%d files failed%s", len(sum.errs), failedHint(verb, sum.errs))
	}
	return werr
}

// failedHint says what to do about the failures errs of a load or an
// uncache: run it again, which resumes it, unless the service or a worker
// refused one (a token that is not a superuser's): the next run would be
// refused alike.
func failedHint(verb string, errs []error) string {
	for _, err := range errs {
		if errors.Is(err, fserr.ErrPermission) || errors.Is(err, fserr.ErrUnauthenticated) {
			return fmt.Sprintf(": refused; %s is a superuser's operation, and running it again with the same token "+
				"will not help ('strata admin token show' says whose token it is)", verb)
		}
	}
	return " (run it again to resume)"
}

// within qualifies p, a path of the namespace that root names, as root is:
// with its strata://NS prefix if it has one.
func within(root, p string) string {
	rest, ok := strings.CutPrefix(root, client.Scheme)
	if !ok {
		return p
	}
	ns, _, _ := strings.Cut(rest, "/")
	return client.Scheme + ns + p
}

// newBar returns a progress bar on standard error when it is a terminal
// (of size bytes, or a spinner when size is -1), else nil.
func newBar(size int64, label string) *progressbar.ProgressBar {
	if !term.IsTerminal(int(os.Stderr.Fd())) || os.Getenv("STRATA_NO_PROGRESS") != "" {
		return nil
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription(label),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(), progressbar.OptionShowCount()}
	if size >= 0 {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
	}
	return progressbar.NewOptions64(size, opts...)
}

// sizeText prints n bytes in binary units, as -du -h does.
func sizeText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
