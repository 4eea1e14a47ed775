package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/fusefs"
)

// maxRequest is the largest read and write request the mount takes.
const maxRequest = 1 << 20

// supervisor is the process that mounted: it keeps the connection's
// descriptor and the kernel's INIT request, and runs the serving process
// on them, again whenever one dies or SIGHUP asks.
type supervisor struct {
	f        *mountFlags
	ns, mp   string
	fd       int
	initFile string
	sigs     chan os.Signal
	deaths   []time.Time
}

func supervise(f *mountFlags, ns, mp string) error {
	fd, err := fusefs.Mount(fusefs.MountConfig{Mountpoint: mp, FsName: "strata:" + ns, MaxRead: maxRequest,
		AllowOther: f.tokenDir != "" || f.insecureCallers})
	if err != nil {
		daemonReady(err)
		return err
	}
	s := &supervisor{f: f, ns: ns, mp: mp, fd: fd, initFile: filepath.Join(f.stateDir, "init"), sigs: stopSignals()}
	initReq, err := fusefs.ReadInit(fd)
	if err == nil {
		err = os.WriteFile(s.initFile, initReq, 0o600)
	}
	if err == nil {
		// A new connection's node ids are its own: no journal applies.
		err = os.Remove(filepath.Join(f.stateDir, "nodes"))
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		s.unmount()
		daemonReady(err)
		return err
	}
	return s.run()
}

// run serves until the mount is unmounted or the supervisor is stopped.
func (s *supervisor) run() error {
	first := true
	for {
		child, exited, err := s.start(first)
		if err != nil {
			s.unmount()
			if first {
				daemonReady(err)
			}
			return err
		}
		if first {
			fmt.Fprintf(os.Stderr, "strata: mounted strata://%s at %s (serving process %d)\n", s.ns, s.mp, child.Process.Pid)
			s.setReadAhead()
			daemonReady(nil)
			first = false
		}
		select {
		case sig := <-s.sigs:
			if sig == syscall.SIGHUP {
				fmt.Fprintf(os.Stderr, "strata: SIGHUP: starting a new serving process (%s) on the same mount\n", self())
				s.stopChild(child, exited)
				continue
			}
			s.unmount()
			s.stopChild(child, exited)
			return nil
		case err := <-exited:
			if err == nil {
				return nil // unmounted
			}
			if e := s.died(err); e != nil {
				return e
			}
		}
	}
}

// died counts a serving process's death, and gives up (detaching the
// mount, so that nobody waits on it) when too many died within a minute.
func (s *supervisor) died(err error) error {
	now := time.Now()
	s.deaths = append(s.deaths, now)
	for len(s.deaths) > 0 && now.Sub(s.deaths[0]) > time.Minute {
		s.deaths = s.deaths[1:]
	}
	if len(s.deaths) > s.f.maxRestarts {
		_ = fusefs.Unmount(s.mp, true)
		return fmt.Errorf("the serving process died %d times within a minute (last: %v): detached %s", len(s.deaths), err, s.mp)
	}
	fmt.Fprintf(os.Stderr, "strata: the serving process died (%v): starting another on the same connection\n", err)
	time.Sleep(time.Duration(len(s.deaths)-1) * 100 * time.Millisecond) // back off a crash loop
	return nil
}

// start runs a serving process on the connection and waits until it
// serves; exited then tells when it ends (nil: the mount was unmounted).
func (s *supervisor) start(first bool) (*exec.Cmd, chan error, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	args := append([]string{}, os.Args[1:]...)
	args = append(args, "--serve-fd=3", "--ready-fd=4", "--state-dir="+s.f.stateDir)
	if first {
		args = append(args, "--first")
	}
	cmd := exec.Command(self(), args...)
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(s.fd), "/dev/fuse"), w}
	unix.CloseOnExec(s.fd) // NB: ExtraFiles dups it for the child only
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, nil, err
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	msg := make([]byte, 4096)
	n, _ := r.Read(msg)
	if string(msg[:n]) != "ok" {
		err := <-exited
		return nil, nil, fmt.Errorf("the serving process failed: %s (%v)", msg[:n], err)
	}
	_ = os.WriteFile(filepath.Join(s.f.stateDir, "serve.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	return cmd, exited, nil
}

// stopChild asks the serving process to end and waits for it.
func (s *supervisor) stopChild(child *exec.Cmd, exited chan error) {
	_ = child.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = child.Process.Kill()
		<-exited
	}
}

// unmount unmounts; a mount in use is detached instead.
func (s *supervisor) unmount() {
	if err := fusefs.Unmount(s.mp, false); err != nil {
		fmt.Fprintf(os.Stderr, "strata: %v: detaching it instead (it goes when its last user does)\n", err)
		_ = fusefs.Unmount(s.mp, true)
	}
}

// setReadAhead sets the kernel's read-ahead of the mount's device, which
// is what sizes its read requests for a sequential reader (go-fuse cannot
// ask for more than 128 KiB at INIT).
func (s *supervisor) setReadAhead() {
	ra, err := parseBytes(s.f.readAhead)
	if err != nil || ra <= 0 {
		return
	}
	var st unix.Stat_t
	if err := unix.Stat(s.mp, &st); err != nil {
		return
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err := os.WriteFile(p, []byte(strconv.FormatInt(ra>>10, 10)), 0); err != nil {
		fmt.Fprintf(os.Stderr, "strata: the read-ahead stays the kernel's: %v\n", err)
	}
}

// self is this binary's path: a serving process started after the binary
// was replaced (an upgrade) runs the new one.
func self() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}
