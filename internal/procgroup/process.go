// Package procgroup starts a namespace service as a group of `strata meta`
// processes of a given binary on loopback, one Raft group, for tests and
// benchmarks that need real processes to kill: it starts, kills and restarts
// members, finds the leader and waits for the members to catch up. Each
// child process dies with its parent.
//
// It is not a way to deploy Strata (every member is on this machine, its
// state in one directory), and it holds no test helpers: testcluster wraps
// it for tests.
package procgroup

import (
	"io"
	"os/exec"
	"syscall"
)

// Process is a child process that dies with its parent. Its methods may be
// called from any goroutine.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // what Wait returned, once done is closed
}

// StartProcess starts binary with args, its stdout and stderr to out (nil:
// discarded).
//
// NB: the process gets SIGKILL when its parent dies, even when a test
// panics or times out before its cleanup runs, or a benchmark is killed.
// out may be an *os.File the caller closes once StartProcess returns: the
// child writes to its own copy.
func StartProcess(binary string, args []string, out io.Writer) (*Process, error) {
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid returns the process's id (for what /proc says of it).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Args returns the command line, the binary first.
func (p *Process) Args() []string { return p.cmd.Args }

// Done is closed when the process has exited and its output was written.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns how it did (as
// exec.Cmd.Wait).
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Kill sends SIGKILL and waits for the process to die; it does nothing
// if the process has exited.
func (p *Process) Kill() { p.signal(syscall.SIGKILL) }

// Stop sends SIGTERM and waits for the process to exit; it does nothing
// if the process has exited.
func (p *Process) Stop() { p.signal(syscall.SIGTERM) }

// Pause stops the process (SIGSTOP) until Resume (SIGCONT): a process
// that holds its connections and answers nothing, as a hung one does.
func (p *Process) Pause() { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process.
func (p *Process) Resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	<-p.done
}
