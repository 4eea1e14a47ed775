package procgroup

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/loopback"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Config says what group to start.
type Config struct {
	Binary  string   // the strata binary
	Dir     string   // member i (from 1) keeps its state in Dir/m<i>
	Members int      // how many
	Args    []string // more arguments for every member
	// Output, if not nil, returns where member i writes its stdout and
	// stderr; it is called at each start of the member. If nil, member i
	// appends them to Dir/m<i>.log.
	Output func(i int) (io.Writer, error)
	// Addrs, if set, are the members' addresses, member i's at Addrs[i-1]
	// (on hosts of their own: internal/testhosts); nil picks free
	// loopback ports.
	Addrs []string
	// Launch, if set, starts member i's process instead of StartProcess
	// (on its host, say).
	Launch func(i int, binary string, args []string, out io.Writer) (*Process, error)
	// Restored: the members' state comes from a backup (Args hold
	// --restore-from), with its namespaces: no "default" namespace is
	// created, and Start waits for a leader instead.
	Restored bool
}

// Group is a namespace service of `strata meta` processes on loopback,
// one Raft group. Member i (from 1) serves at Addrs()[i-1].
//
// Start, Kill and Stop are not for concurrent use; the other methods are.
type Group struct {
	cfg     Config
	addrs   []string
	members []*Process
	admin   struct {
		sync.Mutex
		token string
	}
}

// pollEvery is how often Leader and CaughtUp ask the members again.
const pollEvery = 10 * time.Millisecond

// Start starts a group with a "default" namespace, whose bucket is
// cfg.Dir/bucket (a restored group: with its backup's namespaces). If a
// member exits before the group is ready, Start kills the others and says
// which.
func Start(ctx context.Context, cfg Config) (*Group, error) {
	addrs := cfg.Addrs
	if addrs == nil {
		var err error
		if addrs, err = loopback.FreeAddrs(cfg.Members); err != nil {
			return nil, err
		}
	}
	g := &Group{cfg: cfg, addrs: addrs, members: make([]*Process, cfg.Members)}
	for i := 1; i <= cfg.Members; i++ {
		if _, err := g.Start(i); err != nil {
			g.kill()
			return nil, err
		}
	}
	if err := g.ready(ctx); err != nil {
		g.kill()
		return nil, err
	}
	return g, nil
}

// ready creates the "default" namespace (a restored group's state has its
// namespaces: it waits for a leader instead), giving up as soon as a
// member exits: a member that cannot start would otherwise leave the
// client looking for a leader until its retry timeout.
func (g *Group) ready(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for i, m := range g.members {
		go func() {
			select {
			case <-m.Done():
				cancel(fmt.Errorf("member %d exited: %v", i+1, m.Wait()))
			case <-ctx.Done():
			}
		}()
	}
	tok, err := g.AdminToken(ctx)
	if err != nil {
		return err
	}
	c, err := client.New(client.Config{Meta: g.Meta(), Token: tok, RetryTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer c.Close()
	if g.cfg.Restored {
		_, err = g.Leader(ctx, c)
	} else {
		bucket := "file://" + filepath.Join(g.cfg.Dir, "bucket")
		err = c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: statemachine.DefaultNamespace,
			Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: bucket})
	}
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		return fmt.Errorf("procgroup: a group ready to serve: %w", err)
	}
	return nil
}

// AdminToken returns the superuser's token that the group's first leader
// wrote to its data directory (DATA-DIR/token), waiting for one until ctx
// ends.
func (g *Group) AdminToken(ctx context.Context) (string, error) {
	g.admin.Lock()
	defer g.admin.Unlock()
	for g.admin.token == "" {
		for i := range g.members {
			if b, err := os.ReadFile(filepath.Join(g.MemberDir(i+1), "token")); err == nil {
				g.admin.token = strings.TrimSpace(string(b))
			}
		}
		if g.admin.token != "" {
			break
		}
		if err := pause(ctx); err != nil {
			return "", fmt.Errorf("procgroup: no member wrote an admin token: %w", err)
		}
	}
	return g.admin.token, nil
}

// Addrs returns the members' addresses, member i's at index i-1.
func (g *Group) Addrs() []string { return slices.Clone(g.addrs) }

// Meta returns every member's address, as clients take them.
func (g *Group) Meta() string { return strings.Join(g.addrs, ",") }

// InitialCluster is the group's --initial-cluster: 1=ADDR,2=ADDR,...
func (g *Group) InitialCluster() string {
	var initial []string
	for j, a := range g.addrs {
		initial = append(initial, fmt.Sprintf("%d=%s", j+1, a))
	}
	return strings.Join(initial, ",")
}

// MemberDir returns member i's data directory.
func (g *Group) MemberDir(i int) string { return filepath.Join(g.cfg.Dir, fmt.Sprintf("m%d", i)) }

// Start starts (or restarts) member i of the initial group, with extra
// arguments after the group's. It does not wait for the member to serve.
func (g *Group) Start(i int, extra ...string) (*Process, error) {
	var out io.Writer
	if g.cfg.Output != nil {
		w, err := g.cfg.Output(i)
		if err != nil {
			return nil, err
		}
		out = w
	} else {
		f, err := os.OpenFile(g.MemberDir(i)+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		out = f
	}
	args := append([]string{"meta", "--member-id", strconv.Itoa(i), "--listen", g.addrs[i-1],
		"--data-dir", g.MemberDir(i), "--initial-cluster", g.InitialCluster(), "--plaintext",
		// NB: not the default (the gRPC port + 2), which may be another
		// member's port: the members' ports are free ports, not a range.
		"--http-listen", "127.0.0.1:0"}, g.cfg.Args...)
	launch := g.cfg.Launch
	if launch == nil {
		launch = func(_ int, binary string, args []string, out io.Writer) (*Process, error) {
			return StartProcess(binary, args, out)
		}
	}
	p, err := launch(i, g.cfg.Binary, append(args, extra...), out)
	if err != nil {
		return nil, fmt.Errorf("procgroup: start member %d: %w", i, err)
	}
	g.members[i-1] = p
	return p, nil
}

// Member returns member i's process of its latest start (nil if never
// started).
func (g *Group) Member(i int) *Process { return g.members[i-1] }

// Kill sends SIGKILL to member i and waits for it to die.
func (g *Group) Kill(i int) {
	if p := g.members[i-1]; p != nil {
		p.Kill()
	}
}

// Stop sends SIGTERM to every member and waits for them to exit.
func (g *Group) Stop() { g.each((*Process).Stop) }

func (g *Group) kill() { g.each((*Process).Kill) }

func (g *Group) each(f func(*Process)) {
	var wg sync.WaitGroup
	for _, p := range g.members {
		if p != nil {
			wg.Go(func() { f(p) })
		}
	}
	wg.Wait()
}

// Leader returns the member that leads, asking the members through c until
// one says it leads or ctx ends.
func (g *Group) Leader(ctx context.Context, c *client.Client) (int, error) {
	i, _, err := g.leader(ctx, c)
	return i, err
}

// leader returns the member that leads and the commit index it reported.
func (g *Group) leader(ctx context.Context, c *client.Client) (int, uint64, error) {
	for {
		for _, st := range c.MemberStatuses(ctx) {
			if st.Err != nil || st.Status.Role != "StateLeader" {
				continue
			}
			if i := slices.Index(g.addrs, st.Address); i >= 0 {
				return i + 1, st.Status.CommittedIndex, nil
			}
		}
		if err := pause(ctx); err != nil {
			return 0, 0, fmt.Errorf("procgroup: no leader: %w", err)
		}
	}
}

// CaughtUp waits until every member has applied the leader's commit index
// of the moment, or ctx ends.
func (g *Group) CaughtUp(ctx context.Context, c *client.Client) error {
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
		if err := pause(ctx); err != nil {
			return fmt.Errorf("procgroup: members behind commit index %d: %w", commit, err)
		}
	}
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(pollEvery):
		return nil
	}
}
