// Command strata is the single binary of Strata: the namespace service, the
// workers, the development server, the client CLI, benchmarks and admin.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
)

func main() {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Strata: a distributed file system on object storage",
		Long: `Strata is a distributed file system for big-data and AI workloads whose data
lives in object storage. One binary runs every part:

  strata server --dev     everything in one process (a local directory as the bucket)
  strata meta             a namespace service member
  strata worker           a cache worker (one per compute node)
  strata fs -ls /         the hadoop fs-style client
  strata admin ...        namespaces and cluster status
  strata bench meta       metadata benchmark

Clients find the namespace service with --meta HOST:PORT or $STRATA_META
(default 127.0.0.1:7700); for a Raft group of several members, give them
all, comma-separated: calls follow the leader across failovers.`,
		Version:       metaserver.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(metaCmd(), workerCmd(), serverCmd(), fsCmd(), adminCmd(), benchCmd())
	if err := root.Execute(); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec)) // already reported
		}
		fmt.Fprintln(os.Stderr, "strata:", err)
		os.Exit(1)
	}
}

// exitCode is an error that carries the process's exit status and has
// already been reported.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
