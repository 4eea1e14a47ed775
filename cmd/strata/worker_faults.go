package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/cache/cachefs"
	"github.com/stratafs/strata/internal/worker"
)

// workerFaults are the worker's fault-injection flags, for tests of real
// processes (the chaos test): hidden from --help, described in
// docs/datapath.md ("Under faults").
type workerFaults struct {
	cacheDiskFullAfter string
	space              int64
	fs                 *cachefs.Faulty // the cache's file system, when a fault is asked for
}

func (f *workerFaults) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.cacheDiskFullAfter, "fault-cache-disk-full-after", "",
		"testing: once the worker started, its cache's disk is full (writes fail with ENOSPC) after this many bytes more")
	_ = fl.MarkHidden("fault-cache-disk-full-after")
}

// apply wraps the cache's file system for the faults asked for; arm starts
// them.
func (f *workerFaults) apply(cfg *worker.Config) error {
	if f.cacheDiskFullAfter == "" {
		return nil
	}
	space, err := parseBytes(f.cacheDiskFullAfter)
	if err != nil || space <= 0 {
		return fmt.Errorf("--fault-cache-disk-full-after %q: want a size above 0", f.cacheDiskFullAfter)
	}
	f.space, f.fs = space, cachefs.NewFaulty(cachefs.OS())
	cfg.Cache.FS = f.fs
	return nil
}

// arm starts the faults once the worker has opened its cache: the disk
// fills up from then on, as when another program fills a shared disk, out
// of sight of the cache's checks at its start.
func (f *workerFaults) arm() {
	if f.fs != nil {
		f.fs.LimitSpace(f.space)
	}
}
