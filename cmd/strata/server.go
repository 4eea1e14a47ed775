package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func serverCmd() *cobra.Command {
	var f metaFlags
	var dev bool
	cmd := &cobra.Command{
		Use:   "server --dev",
		Short: "Run all of Strata in one process (development)",
		Long: `Run the namespace service (and, once the data path is in, a worker) in one
process, with a namespace called "default" whose bucket is a local directory
under --data-dir. This is what "make run" starts.

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
			return serveMeta(cmd.Context(), f.config(), f.listen, func(ctx context.Context, s *metaserver.Server) error {
				err := s.EnsureNamespace(ctx, &pb.NamespaceInfo{Name: namespace.DefaultNamespace, Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: store})
				if err != nil {
					return fmt.Errorf("create the default namespace: %w", err)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&dev, "dev", false, "run everything in one process on the embedded default")
	f.register(cmd)
	return cmd
}
