package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/cache/cachefs"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/privdir"
	"github.com/stratafs/strata/internal/token"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// devCacheSize is the dev server's worker cache capacity: small, since a
// development machine's disk holds other things and the bucket beside it
// already keeps every block (a worker's own default is 10GiB).
const devCacheSize = "1GiB"

func serverCmd() *cobra.Command {
	var f metaFlags
	var wf workerFlags
	var dev bool
	var clientTokenFile string
	cmd := &cobra.Command{
		Use:   "server --dev",
		Short: "Run all of Strata in one process (development)",
		Long: `Run the namespace service and a cache worker in one process, with a namespace
called "default" whose bucket is a local directory under --data-dir (the
worker's cache and socket are there too). This is what "make run" starts.

Everything lives in --data-dir; delete it to start over. The namespace's
state (state/, raft/, snapshots/) stays small; the bucket (bucket/) holds
every block of every file larger than --inline-limit for as long as the file
exists, so it grows with what you store; the worker's cache (worker/cache/)
keeps copies of recently used blocks, up to --worker-cache-size (` + devCacheSize + `).
The directory is the local user's alone (0700), as it holds the cluster's
signing keys: one that others may enter is refused unless
--allow-shared-data-dir (docs/security.md). So the worker's socket in it
serves this user's clients; other users' read through the worker's RPC.

Authentication is on, as in a cluster: the server writes a token of the
local user, its superuser, to DATA-DIR/token and to --client-token-file
(~/.strata/token, where the CLI looks), so that the CLI on this host just
works. Issue tokens for other users with "strata admin token create".

Try it from another shell:
  strata fs -mkdir -p /a/b && strata fs -touchz /a/b/f && strata fs -ls -R /`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dev {
				return errors.New("only --dev is supported: run 'strata meta' and 'strata worker' for a cluster")
			}
			abs, err := filepath.Abs(f.dataDir)
			if err != nil {
				return err
			}
			// Before anything is written there (its TLS files first).
			if err := f.checkDataDir(); err != nil {
				return err
			}
			bucket := filepath.Join(abs, "bucket")
			store := "file://" + bucket
			wf.stateDir = filepath.Join(abs, "worker")
			wcfg, err := wf.config()
			if err != nil {
				return err
			}
			mcfg, err := f.config()
			if err != nil {
				return err
			}
			// TLS on, with a CA and certificate of its own unless given
			// some: the CLI finds the CA under ./strata-data.
			if mcfg.TLS, mcfg.PeerTLS, err = f.tls.servers(filepath.Join(abs, devTLSDir)); err != nil {
				return err
			}
			wcfg.TLS, wcfg.MetaTLS, wcfg.Conns = mcfg.TLS, mcfg.PeerTLS, mcfg.Conns
			if err := f.servePprof(); err != nil {
				return err
			}
			o, err := f.obs.open()
			if err != nil {
				return err
			}
			tuneGC(f.memoryLimit)
			return serveMeta(cmd.Context(), o, mcfg, f.listen, func(ctx context.Context, s *metaserver.Serving) error {
				// The bucket holds what the files hold, which the
				// namespace's permissions guard: its user's alone, even
				// in a data directory others may enter.
				if err := privdir.MkdirAll(bucket); err != nil {
					return err
				}
				if err := s.ReadyWithDefault(ctx, store); err != nil {
					return err
				}
				if !mcfg.NoAuth {
					if wcfg.Token, err = devToken(ctx, s.Member, clientTokenFile); err != nil {
						return err
					}
				}
				wcfg.Meta = loopbackIfAny(s.Addr)
				go func() {
					if err := runWorker(ctx, o, wcfg, "127.0.0.1:0", false, nil); err != nil {
						fmt.Fprintln(os.Stderr, "strata: worker:", err)
					}
				}()
				if err := waitForWorker(ctx, s.Server); err != nil {
					return err
				}
				printDevData(abs, wcfg)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&dev, "dev", false, "run everything in one process on the embedded default")
	cmd.Flags().StringVar(&clientTokenFile, "client-token-file", token.DefaultFile(), "where to write the "+
		"superuser's token for the CLI on this host, besides DATA-DIR/token, unless it holds a token this server "+
		"accepts already (empty: nowhere)")
	f.register(cmd)
	wf.register(cmd, "worker-", devCacheSize)
	return cmd
}

// devToken returns the superuser's token, which the dev server's worker
// uses, and writes it to file too unless file holds a token the server
// accepts already (one of another user, say).
func devToken(ctx context.Context, s *metaserver.Member, file string) (string, error) {
	tok, err := s.AdminToken(ctx)
	if err != nil || file == "" {
		return tok, err
	}
	if b, err := os.ReadFile(file); err == nil {
		if _, err := s.Authenticate(strings.TrimSpace(string(b))); err == nil {
			return tok, nil
		}
	}
	if err := token.WriteFile(file, tok); err != nil {
		return "", fmt.Errorf("--client-token-file: %w", err)
	}
	fmt.Fprintf(os.Stderr, "strata: wrote a token of %s, the superuser, to %s (the CLI's default)\n", s.Superuser(), file)
	return tok, nil
}

// waitForWorker returns once the dev worker has registered, so that the
// server announces itself only when it can store data.
func waitForWorker(ctx context.Context, s *metaserver.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if r, err := s.ListWorkers(ctx, &pb.ListWorkersRequest{}); err == nil && len(r.Workers) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the dev worker did not register: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// printDevData tells where the dev server keeps its data and how large it can
// grow, so that a newcomer's disk holds no surprise.
func printDevData(dataDir string, w worker.Config) {
	free, _ := cachefs.Available(cachefs.OS(), dataDir)
	fmt.Fprintf(os.Stderr, "strata: data in %s (%s free there); its bucket/ grows with the files you store\n",
		dataDir, human(uint64(free)))
	for _, d := range w.Cache.Dirs {
		fmt.Fprintf(os.Stderr, "strata: worker cache in %s: at most %s (--worker-cache-size)\n", d.Path, human(uint64(d.Capacity)))
	}
}

// loopbackIfAny returns addr with a wildcard host (--listen 0.0.0.0:PORT or
// [::]:PORT) made 127.0.0.1, an address a process on this host can dial and
// the dev certificate names.
func loopbackIfAny(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}
