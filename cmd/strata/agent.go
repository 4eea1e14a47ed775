package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/agent"
)

const agentLong = `Serve the Go client to the processes of this user on this host, over the
Unix socket --socket: the Python package (python/, docs/python.md) starts
one for each process tree that uses Strata, and talks to it. It is not meant
to be started by hand.

It prints "ready" once it listens, and exits when its standard input reaches
end of file: when the process that started it, and every child that process
forked, are gone. The client it serves is configured as the CLI's is: the
flags below, else the same environment variables (STRATA_META, STRATA_TOKEN,
STRATA_TOKEN_FILE, STRATA_TLS_CA, STRATA_PLAINTEXT, STRATA_TIMEOUT, ...).

` + tokenHelpText

func agentCmd() *cobra.Command {
	var f clientFlags
	var socket string
	cmd := &cobra.Command{
		Use:   "agent --socket PATH",
		Short: "serve the Go client to the Python package on this host (started by it)",
		Long:  agentLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				return usagef("--socket is required")
			}
			return runAgent(&f, socket, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&socket, "socket", "", "the Unix socket to listen on (its directory must be yours alone)")
	return cmd
}

// runAgent serves until stdin ends.
func runAgent(f *clientFlags, socket string, stdin io.Reader, stdout io.Writer) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return err
	}
	defer os.Remove(filepath.Dir(socket)) // the private directory the caller made, once empty
	defer os.Remove(socket)
	// NB: the socket's directory keeps other users out; the file itself is
	// made owner-only too, as a second wall.
	if err := os.Chmod(socket, 0o600); err != nil {
		ln.Close()
		return err
	}
	s := agent.New(c)
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		s.Close()
	}()
	fmt.Fprintln(stdout, "ready")
	return s.Serve(ln)
}
