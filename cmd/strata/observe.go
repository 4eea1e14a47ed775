package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/metrics"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/statuspage"
	"github.com/stratafs/strata/internal/worker"
)

// obsFlags are what a server process tells of itself: its log's format
// and level, its slow-call threshold, and the HTTP listener of its metrics
// and status page.
type obsFlags struct {
	httpListen string
	logFormat  string
	logLevel   string
	slowCall   time.Duration
}

// httpOffset is how far above the gRPC port the HTTP listener's default
// port is: 7700's is 7702, next to the worker's 7701.
const httpOffset = 2

func (f *obsFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.httpListen, "http-listen", "", fmt.Sprintf("address to serve Prometheus metrics (/metrics) and, on the "+
		"namespace service, the status page (/status) on (default: --listen's host, its port + %d, e.g. 127.0.0.1:7702; "+
		"\"off\": none, and no metrics collected)", httpOffset))
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text (key=value lines) or json (a JSON object a line)")
	fl.StringVar(&f.logLevel, "log-level", "info", "least level logged: debug, info, warn or error")
	fl.DurationVar(&f.slowCall, "slow-call", time.Second, "log the calls that take this long or longer, with their trace ids, "+
		"and show the latest on the status page")
}

// observability is a server process's logger and metrics.
type observability struct {
	log     *slog.Logger
	metrics *metrics.Process
	flags   *obsFlags
}

// open returns the process's logger and metrics as the flags say.
func (f *obsFlags) open() (*observability, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch f.logFormat {
	case "text":
		h = slog.NewTextHandler(os.Stderr, opts)
	case "json":
		h = slog.NewJSONHandler(os.Stderr, opts)
	default:
		return nil, usagef("--log-format %q: want text or json", f.logFormat)
	}
	if f.slowCall <= 0 {
		return nil, usagef("--slow-call %v: want a duration above 0", f.slowCall)
	}
	log := slog.New(h)
	return &observability{log: log, metrics: metrics.NewProcess(log, f.slowCall), flags: f}, nil
}

// off reports whether the process serves no metrics (--http-listen off):
// then it collects none either, and logs its slow calls all the same.
func (o *observability) off() bool { return o.flags.httpListen == "off" }

// memberConfig gives a member's configuration the process's logger and
// metrics: its events, its calls, its buckets.
func (o *observability) memberConfig(cfg *metaserver.Config) {
	cfg.Log = o.log
	if o.off() {
		cfg.Calls, cfg.CallStreams = o.metrics.Calls.SlowUnary, o.metrics.Calls.SlowStream
		return
	}
	cfg.Observe = metrics.NewMember(o.metrics.Registry)
	cfg.Calls, cfg.CallStreams = o.metrics.Calls.Unary, o.metrics.Calls.Stream
	cfg.OpenStore = metricsStores(o.metrics.Bucket)
}

// workerConfig gives a worker's configuration the process's logger and
// metrics: its calls, its buckets.
func (o *observability) workerConfig(cfg *worker.Config) {
	cfg.Log, cfg.SlowCall = o.log, o.flags.slowCall
	if o.off() {
		cfg.Calls, cfg.CallStreams = o.metrics.Calls.SlowUnary, o.metrics.Calls.SlowStream
		return
	}
	cfg.Meter = o.metrics.Bucket
	cfg.Calls, cfg.CallStreams = o.metrics.Calls.Unary, o.metrics.Calls.Stream
}

// serveHTTP starts the HTTP listener the flags ask for, grpcAddr's
// neighbour by default, with member's status page if member is not nil.
// A listener of the default address that cannot bind is logged, not
// fatal: the process serves without it.
func (o *observability) serveHTTP(grpcAddr string, member *metaserver.Member, serverTLS, peerTLS *tls.Config) (*statuspage.Server, error) {
	addr, derived, err := httpAddr(o.flags.httpListen, grpcAddr)
	if err != nil || addr == "" {
		return nil, err
	}
	lis, err := listenOn(addr)
	if err != nil && derived {
		o.log.Warn("no metrics or status page: their default address cannot be bound; give --http-listen", "addr", addr, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--http-listen %s: %w", addr, errors.Unwrap(err))
	}
	srv := statuspage.Serve(statuspage.Config{Registry: o.metrics.Registry, Member: member, Slow: o.metrics.Calls.Slow,
		TLS: serverTLS, PeerTLS: peerTLS, Log: o.log}, lis)
	scheme, what := "http", "/metrics"
	if serverTLS != nil {
		scheme = "https"
	}
	if member != nil {
		what = "/metrics and /status"
	}
	fmt.Fprintf(os.Stderr, "strata: http on %s (%s://%s%s)\n", srv.Addr, scheme, srv.Addr, strings.Fields(what)[0])
	o.log.Info("serving "+what, "http", srv.Addr)
	return srv, nil
}

// metricsStores opens buckets as servers do (objstore.DefaultPolicy), each
// request and retry heard by m.
func metricsStores(m *metrics.Bucket) func(ctx context.Context, uri string) (object.Store, error) {
	return objstore.Metered(objstore.DefaultPolicy(), m)
}

// httpAddr is the HTTP listener's address: flag's, or none ("off"), or by
// default grpcAddr's host with its port + httpOffset (0 stays 0).
func httpAddr(flag, grpcAddr string) (addr string, derived bool, err error) {
	switch flag {
	case "off":
		return "", false, nil
	case "":
	default:
		return flag, false, nil
	}
	host, port, err := net.SplitHostPort(grpcAddr)
	if err != nil {
		return "", false, fmt.Errorf("--http-listen: from %q: %w", grpcAddr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", false, fmt.Errorf("--http-listen: from %q: %w", grpcAddr, err)
	}
	if p != 0 {
		p += httpOffset
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), true, nil
}

// embeddedMetrics is what --embedded-metrics gives a benchmark's embedded
// member: the metrics strata meta collects, gathered every 5 s (a scrape's
// work, without the HTTP) until ctx ends.
func embeddedMetrics(ctx context.Context) func(*metaserver.Config) {
	return func(cfg *metaserver.Config) {
		log := cfg.Log
		o := &observability{log: log, metrics: metrics.NewProcess(log, time.Second), flags: &obsFlags{slowCall: time.Second}}
		o.memberConfig(cfg)
		cfg.Log = log
		go func() {
			t := time.NewTicker(5 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_, _ = o.metrics.Registry.Gather()
				}
			}
		}()
	}
}
