package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/connlimit"
)

// connFlags bound the connections a server holds open (internal/connlimit;
// docs/security.md, "Connections"): --max-conns, --max-conns-per-addr and
// --first-call-timeout.
type connFlags struct {
	max, perAddr int
	firstCall    time.Duration
}

func (f *connFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.max, "max-conns", connlimit.DefaultMaxConns, "connections held open at once on each port, in all; "+
		"those over it are closed as they come (-1: no cap)")
	fl.IntVar(&f.perAddr, "max-conns-per-addr", connlimit.DefaultMaxPerAddr, "connections held open at once on each port "+
		"from one remote IP address (on a worker's short-circuit socket, from one local user); -1: no cap")
	fl.DurationVar(&f.firstCall, "first-call-timeout", connlimit.DefaultFirstCall, "how long a connection may stay open "+
		"before its first authenticated call (a call with a valid token, a member's Raft traffic, a worker's heartbeat; "+
		"at a worker, a request with a valid block token), its TLS handshake included; -1s: no limit")
}

// config returns the bounds the flags set.
func (f *connFlags) config() (connlimit.Config, error) {
	if f.max == 0 || f.perAddr == 0 || f.firstCall == 0 {
		return connlimit.Config{}, fmt.Errorf("--max-conns, --max-conns-per-addr and --first-call-timeout " +
			"cannot be 0: give -1 to turn a bound off")
	}
	return connlimit.Config{MaxConns: f.max, MaxPerAddr: f.perAddr, FirstCall: f.firstCall}, nil
}
