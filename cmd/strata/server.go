package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func serverCmd() *cobra.Command {
	var f metaFlags
	var wf workerFlags
	var dev bool
	cmd := &cobra.Command{
		Use:   "server --dev",
		Short: "Run all of Strata in one process (development)",
		Long: `Run the namespace service and a cache worker in one process, with a namespace
called "default" whose bucket is a local directory under --data-dir (the
worker's cache and socket are there too). This is what "make run" starts.

Try it from another shell:
  strata fs -mkdir -p /a/b && strata fs -touchz /a/b/f && strata fs -ls -R /`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dev {
				return errors.New("only --dev is supported: run 'strata meta' and 'strata worker' for a cluster")
			}
			abs, err := filepath.Abs(f.dataDir)
			if err != nil {
				return err
			}
			store := "file://" + filepath.Join(abs, "bucket")
			wf.stateDir = filepath.Join(abs, "worker")
			wcfg, err := wf.config()
			if err != nil {
				return err
			}
			mcfg, err := f.config()
			if err != nil {
				return err
			}
			if err := f.servePprof(); err != nil {
				return err
			}
			return serveMeta(cmd.Context(), mcfg, f.listen, func(ctx context.Context, s *metaserver.Serving) error {
				if err := s.ReadyWithDefault(ctx, store); err != nil {
					return err
				}
				wcfg.Meta = s.Addr
				go func() {
					if err := runWorker(ctx, wcfg, "127.0.0.1:0"); err != nil {
						fmt.Fprintln(os.Stderr, "strata: worker:", err)
					}
				}()
				return waitForWorker(ctx, s.Server)
			})
		},
	}
	cmd.Flags().BoolVar(&dev, "dev", false, "run everything in one process on the embedded default")
	f.register(cmd)
	wf.register(cmd, "worker-")
	return cmd
}

// waitForWorker returns once the dev worker has registered, so that the
// server announces itself only when it can store data.
func waitForWorker(ctx context.Context, s *metaserver.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if r, err := s.ListWorkers(ctx, &pb.ListWorkersRequest{}); err == nil && len(r.Workers) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the dev worker did not register: %w", ctx.Err())
		case <-t.C:
		}
	}
}
