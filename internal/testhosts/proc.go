package testhosts

import (
	"fmt"
	"io"

	"github.com/stratafs/strata/internal/procgroup"
)

// Start starts binary with args on h: in its network namespace, with its
// host name. Its stdout and stderr go to out (nil: discarded). It dies
// with the test process (procgroup.StartProcess).
//
// NB: nsenter enters the namespaces and execs binary in the same process
// (it forks only to enter a PID namespace), so the process is the one
// procgroup started, and its parent-death signal holds.
func (h *Host) Start(binary string, args []string, out io.Writer) (*procgroup.Process, error) {
	p, err := procgroup.StartProcess("nsenter", h.wrap(binary, args), out)
	if err != nil {
		return nil, fmt.Errorf("testhosts: start %s on %s: %w", binary, h.Name, err)
	}
	return p, nil
}

// wrap returns the arguments of nsenter that run binary with args on h.
func (h *Host) wrap(binary string, args []string) []string {
	return append([]string{"--net=/run/netns/" + h.netns, "--uts=" + h.uts, "--", binary}, args...)
}

// Run runs a command on h to its end and returns its combined output.
func (h *Host) Run(binary string, args ...string) (string, error) {
	return run("nsenter", h.wrap(binary, args)...)
}

// Launcher returns the function that starts member i of a group on
// hosts[i-1] (procgroup.Config.Launch, testcluster.Placement).
func Launcher(hosts []*Host) func(i int, binary string, args []string, out io.Writer) (*procgroup.Process, error) {
	return func(i int, binary string, args []string, out io.Writer) (*procgroup.Process, error) {
		return hosts[i-1].Start(binary, args, out)
	}
}
