package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/cache/cachefs"
	"github.com/stratafs/strata/internal/worker"
)

// workerFaults are the worker's fault-injection flags, for tests of real
// processes (the chaos test): hidden from --help, described in
// docs/datapath.md ("Faults for tests").
type workerFaults struct {
	cacheDiskSpace string
}

func (f *workerFaults) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.cacheDiskSpace, "fault-cache-disk-space", "", "testing: the cache's disk fills up (writes fail with ENOSPC) once this many bytes were written to it")
	_ = fl.MarkHidden("fault-cache-disk-space")
}

// apply wraps the cache's file system in the faults asked for.
func (f *workerFaults) apply(cfg *worker.Config) error {
	if f.cacheDiskSpace == "" {
		return nil
	}
	space, err := parseBytes(f.cacheDiskSpace)
	if err != nil || space <= 0 {
		return fmt.Errorf("--fault-cache-disk-space %q: want a size above 0", f.cacheDiskSpace)
	}
	fs := cachefs.NewFaulty(cachefs.OS())
	fs.LimitSpace(space)
	cfg.Cache.FS = fs
	return nil
}
