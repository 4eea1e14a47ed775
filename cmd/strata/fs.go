package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fsshell"
)

func fsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "fs [--meta HOST:PORT] [--namespace NS] [--timeout DURATION] -CMD [options] [args...]",
		Short: "hadoop fs-style client commands",
		Long: `The file system shell, as "hadoop fs": -ls, -mkdir, -put, -get, -cat, -mv,
-rm, -du, -count, -stat, -chmod, -chown, -touchz, -test, ... with Hadoop's
options, output formats, messages and exit codes (0, 1 when a path failed,
255 for a usage error). Paths are strata://NS/path, strata:///path, /path,
or relative to /user/<user>; globs (* ? [...] {a,b}) are expanded by listing.

  strata fs -help          every command and its options
  strata fs -help ls       one command

The namespace service is --meta HOST:PORT, else $STRATA_META, else
127.0.0.1:7700. A service that accepts no connection within --timeout
(else $STRATA_TIMEOUT, else 3s) is reported at once, with the address and
the cause. Metadata calls go over callwire, the service's framed transport
beside gRPC on the same port; STRATA_META_TRANSPORT=grpc sends them over
gRPC. Reads and writes go short-circuit through a worker's Unix socket
wherever the client reaches one whose worker proves who it is; in a
container, STRATA_SC_DIR names the directory the workers' sockets are
shared into. ` + tokenHelpText + `.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, rest, err := fsshell.ParseOptions(args)
			var cfg client.Config
			if err == nil {
				cfg, err = clientConfig(opts.Meta, opts.Namespace, opts.Timeout, opts.TokenFile)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "fs:", err)
				return exitCode(255) // the shell's usage status, as Hadoop's -1
			}
			// A command's live heap is a few pages of entries or buffers:
			// collecting it less often is a fifth less CPU for -ls -R of
			// millions of entries. $GOGC wins.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(400)
			}
			code := fsshell.Run(cmd.Context(), rest, os.Stdout, os.Stderr, func() (*client.Client, error) {
				return client.New(cfg)
			})
			// The shell reported every failure itself, in Hadoop's words.
			if code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
}
