package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fusefs"
)

// mountFlags are strata mount's flags.
type mountFlags struct {
	client           clientFlags
	daemon           bool
	logFile          string
	stateDir         string
	attrTimeout      time.Duration
	entryTimeout     time.Duration
	negTimeout       time.Duration
	tokenDir         string
	insecureCallers  bool
	stageDir         string
	stageLimit       string
	readAhead        string
	metrics          string
	hungAfter        time.Duration
	readRetry        time.Duration
	maxRestarts      int
	debug            bool
	serveFD, readyFD int // a serving process's (hidden)
	first            bool
}

func mountCmd() *cobra.Command {
	f := &mountFlags{}
	cmd := &cobra.Command{
		Use:   "mount NAMESPACE MOUNTPOINT",
		Short: "mount a namespace with FUSE (docs/fuse.md)",
		Long: `Mounts namespace NAMESPACE at directory MOUNTPOINT, so that any program reads
and writes it as local files: reads and writes go through the workers' caches
(short-circuit on a worker's host), names and permissions are the namespace
service's. What POSIX calls behave how: docs/fuse.md.

It runs in the foreground until the mount is unmounted (strata umount, or
fusermount3 -u) or it is stopped (SIGINT, SIGTERM: it unmounts); --daemon
runs it in the background once mounted. The process that mounts keeps the
mount's connection and serves it through a child process: a child that dies
is started again on the same connection, its open files read again and no
request lost; SIGHUP starts a new child (an upgraded binary) without
unmounting. A dead mount left at MOUNTPOINT by a killed mount is detached
first.

Who may use it: only the user who mounts, with that user's token (` + "`--token-file`" + `),
unless --token-dir gives each local user the token of their own (then
every user's requests are checked by the service as that user).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runMount(f, args[0], args[1]) },
	}
	f.register(cmd)
	return cmd
}

func (f *mountFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.client.register(cmd)
	fl.BoolVarP(&f.daemon, "daemon", "d", false, "run in the background once mounted")
	fl.StringVar(&f.logFile, "log", "", "the log of a daemon (default STATE-DIR/mount.log)")
	fl.StringVar(&f.stateDir, "state-dir", "", "where the mount keeps its node journal and log (default /run/strata-mount/<hash of MOUNTPOINT>, or ~/.strata/mount/... for a user)")
	fl.DurationVar(&f.attrTimeout, "attr-timeout", time.Second, "how long the kernel trusts a file's attributes without asking (0: always asks)")
	fl.DurationVar(&f.entryTimeout, "entry-timeout", time.Second, "how long the kernel trusts a name it looked up without asking")
	fl.DurationVar(&f.negTimeout, "negative-timeout", 0, "how long the kernel trusts that a name does not exist")
	fl.StringVar(&f.tokenDir, "token-dir", "", "a directory of token files, one per local user name (mode 600): every local user may use the mount, each as themselves; users without a file are refused")
	fl.BoolVar(&f.insecureCallers, "insecure-callers", false, "every local user may use the mount, each naming their own user and groups: only for a service run with --insecure-no-auth (tests)")
	fl.StringVar(&f.stageDir, "stage-dir", "", "local directory where random writes are staged until close (default the system's temporary directory)")
	fl.StringVar(&f.stageLimit, "stage-limit", "10GiB", "the most bytes staged at once; a random write past it fails with ENOSPC")
	fl.StringVar(&f.readAhead, "read-ahead", "16MiB", "the kernel's read-ahead on the mount, for sequential streams")
	fl.StringVar(&f.metrics, "metrics", "", "HOST:PORT to serve the mount's counters on (requests by operation, in flight, hung), as text")
	fl.DurationVar(&f.readRetry, "read-retry", 30*time.Second, "how long a read waits for a worker that can serve it (one restarting) before it fails with EIO")
	fl.DurationVar(&f.hungAfter, "hung-after", 30*time.Second, "a request running longer is logged, and counted as hung")
	fl.IntVar(&f.maxRestarts, "max-restarts", 10, "serving processes that may die within a minute before the mount gives up and unmounts")
	fl.BoolVar(&f.debug, "debug", false, "log every FUSE request")
	fl.IntVar(&f.serveFD, "serve-fd", 0, "")
	fl.IntVar(&f.readyFD, "ready-fd", 0, "")
	fl.BoolVar(&f.first, "first", false, "")
	for _, h := range []string{"serve-fd", "ready-fd", "first"} {
		_ = fl.MarkHidden(h)
	}
}

// daemonEnv marks the background process of --daemon.
const daemonEnv = "STRATA_MOUNT_DAEMON"

func runMount(f *mountFlags, ns, mp string) error {
	mp, err := filepath.Abs(mp)
	if err != nil {
		return err
	}
	if f.serveFD > 0 {
		return serveMount(f, ns, mp)
	}
	if f.tokenDir != "" && f.insecureCallers {
		return usagef("--token-dir and --insecure-callers: one identity at a time")
	}
	if err := checkNamespace(f, ns); err != nil {
		return err
	}
	detached, err := fusefs.CheckMountpoint(mp)
	if err != nil {
		return err
	}
	if detached {
		fmt.Fprintf(os.Stderr, "strata: %s was a dead mount (its process had gone): detached it\n", mp)
	}
	if f.stateDir == "" {
		f.stateDir = defaultStateDir(mp)
	}
	if err := os.MkdirAll(f.stateDir, 0o700); err != nil {
		return err
	}
	if f.daemon && os.Getenv(daemonEnv) == "" {
		return daemonize(f, mp)
	}
	return supervise(f, ns, mp)
}

// checkNamespace fails, saying so, when ns does not exist or the service
// cannot be reached, before anything is mounted.
func checkNamespace(f *mountFlags, ns string) error {
	c, err := f.client.client()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.Stat(ctx, "strata://"+ns+"/")
	if errors.Is(err, fserr.ErrNoNamespace) {
		return fmt.Errorf("no such namespace: %q (strata admin ns list shows them)", ns)
	}
	return err
}

// defaultStateDir is where a mount at mp keeps its state: one directory
// per mount point, so that a restarted mount finds its predecessor's.
func defaultStateDir(mp string) string {
	sum := sha256.Sum256([]byte(mp))
	name := hex.EncodeToString(sum[:8])
	if os.Geteuid() == 0 {
		return filepath.Join("/run/strata-mount", name)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".strata", "mount", name)
}

// daemonize starts this command again in the background, its output to
// the log, and returns once it mounted (or says why it could not).
func daemonize(f *mountFlags, mp string) error {
	if f.logFile == "" {
		f.logFile = filepath.Join(f.stateDir, "mount.log")
	}
	logf, err := os.OpenFile(f.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	msg := make([]byte, 4096)
	n, _ := r.Read(msg)
	if string(msg[:n]) != "ok" {
		return fmt.Errorf("the mount failed (log: %s): %s", f.logFile, msg[:n])
	}
	fmt.Printf("strata: mounted at %s in the background (pid %d, log %s)\n", mp, cmd.Process.Pid, f.logFile)
	return nil
}

// daemonReady tells the process that started this daemon how the mount
// went, once: "ok" or the error.
func daemonReady(err error) {
	if os.Getenv(daemonEnv) == "" {
		return
	}
	p := os.NewFile(3, "ready")
	if p == nil {
		return
	}
	defer p.Close()
	if err != nil {
		fmt.Fprint(p, err.Error())
		return
	}
	fmt.Fprint(p, "ok")
}

func umountCmd() *cobra.Command {
	var lazy bool
	cmd := &cobra.Command{
		Use:   "umount MOUNTPOINT",
		Short: "unmount a strata mount (as fusermount3 -u does)",
		Long: `Unmounts MOUNTPOINT. The mount's process commits the files still open and
exits. A mount in use (a shell inside it, an open file) is busy: --lazy
detaches it at once and it goes when the last use ends.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mp, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if ok, _ := fusefs.IsMounted(mp); !ok {
				return fmt.Errorf("%s is not mounted", mp)
			}
			return fusefs.Unmount(mp, lazy)
		},
	}
	cmd.Flags().BoolVarP(&lazy, "lazy", "l", false, "detach now, even while in use")
	return cmd
}

// stopSignals are the signals that end a mount; SIGHUP restarts its
// serving process.
func stopSignals() chan os.Signal {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	return ch
}
