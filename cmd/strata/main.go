// Command strata is the single binary of Strata: the namespace service, the
// workers, the development server, the client CLI, benchmarks and admin.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
  strata mount NS DIR     mount a namespace with FUSE (strata umount DIR)
  strata admin ...        namespaces and cluster status
  strata bench meta       metadata benchmark
  strata version          version, source revision and Go version
  strata agent            the Go client served to the Python package (it starts it)

Clients find the namespace service with --meta HOST:PORT or $STRATA_META
(default 127.0.0.1:7700); for a Raft group of several members, give them
all, comma-separated: calls follow the leader across failovers.`,
		Version:       metaserver.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(versionText())
	root.AddCommand(metaCmd(), workerCmd(), serverCmd(), fsCmd(), adminCmd(), benchCmd(), agentCmd(), mountCmd(), umountCmd(), versionCmd())
	markUsageErrors(root)
	if err := root.Execute(); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec)) // already reported
		}
		fmt.Fprintln(os.Stderr, "strata:", err)
		if isUsage(err) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command line that cannot run as written (a flag, an
// argument, an address): exit status 2, as for Go's flag package and most
// Unix tools. ("strata fs" has Hadoop's statuses, 255 for these.)
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// markUsageErrors makes the errors cobra finds in flags and arguments, in
// cmd and below, usage errors.
func markUsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// isUsage reports whether err is a usage error; cobra's "unknown command"
// has no type of its own.
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ")
}

// exitCode is an error that carries the process's exit status and has
// already been reported.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
