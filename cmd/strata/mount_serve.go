package main

import (
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fusefs"
)

// serveMount is the serving process: it answers the kernel on the
// connection its supervisor passed (fd f.serveFD) until the mount is
// unmounted or it is told to stop (SIGTERM).
func serveMount(f *mountFlags, ns, mp string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("mount", mp)
	ready := os.NewFile(uintptr(f.readyFD), "ready")
	fs, err := newMountFS(f, ns, logger)
	if err != nil {
		fmt.Fprint(ready, err.Error())
		return err
	}
	initReq, err := os.ReadFile(filepath.Join(f.stateDir, "init"))
	if err != nil {
		fmt.Fprint(ready, err.Error())
		return err
	}
	srv, err := fusefs.Serve(fs, f.serveFD, initReq, f.first, mountOptions(f, ns, logger))
	if err != nil {
		fmt.Fprint(ready, err.Error())
		return err
	}
	unix.Close(f.serveFD)
	if n := fs.Nodes(); !f.first {
		logger.Info("took the mount over from a predecessor", "nodes", n)
	}
	fmt.Fprint(ready, "ok")
	ready.Close()
	if f.metrics != "" {
		go serveMetrics(f.metrics, fs, logger)
	}
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	select {
	case <-done: // unmounted
		fs.Close()
	case <-sigs:
		handOver(fs, logger)
	}
	return nil
}

// handOver waits a while for the requests in flight to be answered before a
// serving process leaves its connection to a successor (which the kernel
// sends the rest again).
func handOver(fs *fusefs.FS, logger *slog.Logger) {
	deadline := time.Now().Add(10 * time.Second)
	for fs.Stats().InFlight > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logger.Info("handing the mount over", "in_flight", fs.Stats().InFlight)
}

// newMountFS makes the file system with the identity and limits of f.
func newMountFS(f *mountFlags, ns string, logger *slog.Logger) (*fusefs.FS, error) {
	cfg, err := clientConfig(f.client.meta, f.client.ns, f.client.timeout, f.client.tokenFile)
	if err != nil {
		return nil, err
	}
	if cfg.TLS, err = f.client.tls.client(); err != nil {
		return nil, err
	}
	noUmask := uint32(0) // the kernel applied the caller's umask already
	cfg.Umask = &noUmask
	var id fusefs.Identity
	switch {
	case f.tokenDir != "":
		id = fusefs.TokenDir(f.tokenDir, cfg)
	case f.insecureCallers:
		id = fusefs.CallerNames(cfg)
	default:
		id, err = oneIdentity(cfg)
		if err != nil {
			return nil, err
		}
	}
	limit, err := parseBytes(f.stageLimit)
	if err != nil {
		return nil, usagef("--stage-limit: %v", err)
	}
	return fusefs.New(fusefs.Options{Namespace: ns, Identity: id, EntryTimeout: f.entryTimeout,
		AttrTimeout: f.attrTimeout, NegativeTimeout: f.negTimeout, StageDir: f.stageDir, StageLimit: limit,
		Journal: filepath.Join(f.stateDir, "nodes"), HungAfter: f.hungAfter, ReadRetry: f.readRetry, Log: logger})
}

// mountOptions are go-fuse's: 1 MiB requests, requests served in
// parallel (reads too: async reads), the kernel's background queue as
// deep as JuiceFS's.
func mountOptions(f *mountFlags, ns string, logger *slog.Logger) fuse.MountOptions {
	return fuse.MountOptions{MaxWrite: maxRequest, MaxReadAhead: maxRequest, MaxBackground: 200,
		Name: "strata", FsName: "strata:" + ns, Debug: f.debug, Logger: log.New(os.Stderr, "", log.LstdFlags),
		AllowOther: f.tokenDir != "" || f.insecureCallers, DisableSplice: true}
}

// serveMetrics serves the mount's counters as text at addr.
func serveMetrics(addr string, fs *fusefs.FS, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		s := fs.Stats()
		fmt.Fprintf(w, "strata_mount_requests_in_flight %d\nstrata_mount_requests_hung %d\nstrata_mount_requests_hung_total %d\nstrata_mount_request_oldest_seconds %.3f\n",
			s.InFlight, s.Hung, s.HungAll, s.Oldest.Seconds())
		for _, op := range s.OpNames() {
			o := s.Ops[op]
			fmt.Fprintf(w, "strata_mount_requests_total{op=%q} %d\nstrata_mount_request_seconds_total{op=%q} %.6f\n", op, o.Count, op, o.Seconds)
		}
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		logger.Error("metrics", "err", err)
	}
}

// oneIdentity is the mount owner's: one client for every request.
func oneIdentity(cfg client.Config) (fusefs.Identity, error) {
	c, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	return fusefs.One{C: c}, nil
}
