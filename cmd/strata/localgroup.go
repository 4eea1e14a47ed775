package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/loopback"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// localGroup is a namespace service of n `strata meta` processes of this
// binary on loopback, started by a benchmark. Member i (from 1) keeps its
// state in dir/m<i> and its log in dir/m<i>.log.
type localGroup struct {
	dir   string
	addrs []string
	args  []string
	procs []*exec.Cmd
	done  []chan struct{}
}

func startLocalGroup(ctx context.Context, n int, dir string, args ...string) (*localGroup, error) {
	g := &localGroup{dir: dir, args: args, procs: make([]*exec.Cmd, n), done: make([]chan struct{}, n)}
	addrs, err := loopback.FreeAddrs(n)
	if err != nil {
		return nil, err
	}
	g.addrs = addrs
	for i := 1; i <= n; i++ {
		if err := g.start(i); err != nil {
			g.stop()
			return nil, err
		}
	}
	c, err := g.client()
	if err != nil {
		g.stop()
		return nil, err
	}
	defer c.Close()
	err = c.CreateNamespace(ctx, "default", pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "file://"+filepath.Join(dir, "bucket"))
	if err != nil {
		g.stop()
		return nil, fmt.Errorf("create the default namespace: %w", err)
	}
	return g, nil
}

func (g *localGroup) meta() string { return strings.Join(g.addrs, ",") }

func (g *localGroup) client() (*client.Client, error) {
	return client.New(client.Config{Meta: g.meta(), RetryTimeout: time.Minute})
}

// start starts (or restarts) member i.
func (g *localGroup) start(i int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var initial []string
	for j, a := range g.addrs {
		initial = append(initial, fmt.Sprintf("%d=%s", j+1, a))
	}
	log, err := os.OpenFile(filepath.Join(g.dir, fmt.Sprintf("m%d.log", i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{"meta", "--member-id", fmt.Sprint(i), "--listen", g.addrs[i-1],
		"--data-dir", filepath.Join(g.dir, fmt.Sprintf("m%d", i)), "--initial-cluster", strings.Join(initial, ",")}, g.args...)
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	g.procs[i-1], g.done[i-1] = cmd, done
	return nil
}

// kill sends SIGKILL to member i and waits for it to die.
func (g *localGroup) kill(i int) {
	if p := g.procs[i-1]; p != nil {
		_ = p.Process.Kill()
		<-g.done[i-1]
		g.procs[i-1] = nil
	}
}

func (g *localGroup) stop() {
	for i := range g.procs {
		if p := g.procs[i]; p != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
			<-g.done[i]
			g.procs[i] = nil
		}
	}
}

// leader returns the member that leads and the leader's commit index,
// waiting for one.
func (g *localGroup) leader(ctx context.Context, c *client.Client) (int, uint64, error) {
	for {
		for _, st := range c.MemberStatuses(ctx) {
			if st.Err != nil || st.Status.Role != "StateLeader" {
				continue
			}
			for i, a := range g.addrs {
				if a == st.Address {
					return i + 1, st.Status.CommittedIndex, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// caughtUp waits until every member applied the leader's commit index of
// the moment.
func (g *localGroup) caughtUp(ctx context.Context, c *client.Client) error {
	_, commit, err := g.leader(ctx, c)
	if err != nil {
		return err
	}
	for {
		behind := false
		for _, st := range c.MemberStatuses(ctx) {
			behind = behind || st.Err != nil || st.Status.AppliedIndex < commit
		}
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
