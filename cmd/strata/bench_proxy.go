package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/linkproxy"
)

const benchProxyLong = `Run a TCP proxy to --to whose connections all share one bandwidth limit,
--bandwidth bytes per second each way: an emulated network link in front of
an S3 endpoint (MinIO), so that every client of the bucket, whatever it is
(Spark's S3A, Strata's workers), meets the same limit. make bench-tpcds puts
it in front of MinIO (docs/benchmarks.md, "TPC-DS on Spark").

The proxy moves bytes only: no per-request latency, no faults, no retries.
With --control it serves, over HTTP on that address:
  GET /stats                       bytes each way, connections, the limit (JSON)
  PUT /bandwidth?bytes-per-sec=N   a new limit, for open connections too

It prints "proxy: serving on ADDR" (and "proxy: control on ADDR") once it
listens, and runs until SIGINT or SIGTERM.`

func benchProxyCmd() *cobra.Command {
	var listen, to, bandwidth, control string
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "A bandwidth-limited TCP proxy in front of a bucket's endpoint, for benchmarks",
		Long:  benchProxyLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return errors.New("--to HOST:PORT is required")
			}
			bw, err := parseBytes(bandwidth)
			if err != nil {
				return fmt.Errorf("--bandwidth: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBenchProxy(ctx, cmd.OutOrStdout(), listen, to, control, float64(bw))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:0", "address to accept connections on")
	fl.StringVar(&to, "to", "", "address to forward them to, HOST:PORT")
	fl.StringVar(&bandwidth, "bandwidth", "0", "limit each way, per second, shared by every connection (e.g. 16MB; 0: none)")
	fl.StringVar(&control, "control", "", "address of the HTTP control (stats, limit); none if empty")
	return cmd
}

func runBenchProxy(ctx context.Context, out io.Writer, listen, to, control string, bw float64) error {
	p, err := linkproxy.Listen(listen, to, bw)
	if err != nil {
		return err
	}
	defer p.Close()
	if control != "" {
		ln, err := net.Listen("tcp", control)
		if err != nil {
			return fmt.Errorf("--control: %w", err)
		}
		srv := &http.Server{Handler: linkproxy.Handler(p)}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		fmt.Fprintf(out, "proxy: control on %s\n", ln.Addr())
	}
	fmt.Fprintf(out, "proxy: serving on %s\n", p.Addr())
	served := make(chan error, 1)
	go func() { served <- p.Serve() }()
	select {
	case <-ctx.Done():
		return p.Close()
	case err := <-served:
		return err
	}
}
