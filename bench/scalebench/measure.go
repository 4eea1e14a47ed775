package scalebench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/cputime"
)

// measure measures the member at the size row is of.
func (r *runner) measure(ctx context.Context, row *Row) error {
	if err := r.probe(ctx, row); err != nil {
		return err
	}
	row.RSS = rss(r.g.Member(1).Pid())
	row.Disk = du(r.g.MemberDir(1))
	row.Inodes = r.inodes(ctx)
	var errs []error
	var err error
	// kill -9 first, right after the probes' writes: what a crash meets
	// (the first start after writes replays more than the next ones).
	row.Killed, err = r.restart(ctx, true, false)
	errs = append(errs, err)
	row.Clean, err = r.restart(ctx, false, false)
	errs = append(errs, err)
	if r.cfg.DropCaches {
		row.Cold, err = r.restart(ctx, true, true)
		errs = append(errs, err)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return r.traverse(ctx, row)
}

// inodes counts what every namespace of the member holds.
func (r *runner) inodes(ctx context.Context) uint64 {
	list, err := r.c.Namespaces(ctx)
	if err != nil {
		return 0
	}
	var n uint64
	for _, ns := range list {
		if s, err := r.c.ContentSummary(ctx, "strata://"+ns.Name+"/"); err == nil {
			n += s.FileCount + s.DirectoryCount
		}
	}
	return n
}

// probe runs the metadata phases in a directory of their own, which they
// leave empty.
func (r *runner) probe(ctx context.Context, row *Row) error {
	clients := make([]*client.Client, 4)
	tok, err := r.g.AdminToken(ctx)
	if err != nil {
		return err
	}
	for i := range clients {
		if clients[i], err = client.New(client.Config{Meta: r.g.Meta(), Token: tok}); err != nil {
			return err
		}
		defer clients[i].Close()
	}
	row.OpCPU = map[metabench.Op]time.Duration{}
	pid := r.g.Member(1).Pid()
	onPhase := func(op metabench.Op, _ int) func() {
		start := cputime.Of(pid)
		return func() { row.OpCPU[op] = cputime.Of(pid) - start }
	}
	rep, err := metabench.Run(ctx, metabench.Config{Clients: clients, Target: r.g.Meta(), OnPhase: onPhase,
		Dir: fmt.Sprintf("/probe-%d", row.Files), Threads: []int{r.cfg.Threads}, Files: r.cfg.Probe, Ops: r.cfg.Ops})
	if err != nil {
		return err
	}
	row.Ops = map[metabench.Op]metabench.Result{}
	for _, res := range rep.Results {
		row.Ops[res.Op] = res
	}
	return nil
}

// restart stops the member (SIGTERM, or SIGKILL if kill), drops the page
// cache if cold, starts it again, and returns how long from the start to
// its first answer (a stat).
func (r *runner) restart(ctx context.Context, kill, cold bool) (time.Duration, error) {
	if kill {
		r.g.Kill(1)
	} else {
		r.g.Member(1).Stop()
	}
	if cold {
		if err := dropCaches(); err != nil {
			return 0, err
		}
	}
	r.c.Close()
	start := time.Now()
	if _, err := r.g.Start(1); err != nil {
		return 0, err
	}
	if err := r.connect(ctx); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		_, err := r.c.Stat(ctx, "/")
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("scalebench: the member did not answer within 5 minutes of its restart: %w", err)
		}
		time.Sleep(2 * time.Millisecond) // asking again: the first answer is what is measured
	}
}

// dropCaches empties the kernel's page cache (root only).
func dropCaches() error {
	exec.Command("sync").Run()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		return fmt.Errorf("scalebench: drop the page cache: %w (run as root, or without --drop-caches)", err)
	}
	return nil
}

// traverse times ls -R of the big table and count of the big database (of
// the largest namespace before it exists), through the CLI, as a user
// runs them.
func (r *runner) traverse(ctx context.Context, row *Row) error {
	if r.tableNS != "" {
		start := time.Now()
		lines, err := r.cli(ctx, "fs", "-ls", "-R", "strata://"+r.tableNS+BigTablePath)
		if err != nil {
			return err
		}
		row.LsR, row.LsRLines = time.Since(start), lines
	}
	path := ""
	switch {
	case r.dbNS != "":
		path = "strata://" + r.dbNS + BigDBPath
	case r.tableNS != "":
		path = "strata://" + r.tableNS + "/"
	default:
		return nil
	}
	start := time.Now()
	if _, err := r.cli(ctx, "fs", "-count", path); err != nil {
		return err
	}
	row.Count, row.CountPath = time.Since(start), strings.TrimPrefix(path, "strata://")
	if s, err := r.c.ContentSummary(ctx, path); err == nil {
		row.CountOf = s.FileCount
	}
	return nil
}

// cli runs strata with args against the member and returns the lines it
// printed (read as they come, as a terminal or a pipe would).
func (r *runner) cli(ctx context.Context, args ...string) (uint64, error) {
	tok, err := r.g.AdminToken(ctx)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, r.cfg.Binary, args...)
	cmd.Env = append(os.Environ(), "STRATA_META="+r.g.Meta(), "STRATA_TOKEN="+tok, "STRATA_PLAINTEXT=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	lines, err := countLines(out)
	if werr := cmd.Wait(); werr != nil {
		return lines, fmt.Errorf("strata %s: %v: %s", strings.Join(args, " "), werr, stderr.String())
	}
	return lines, err
}

func countLines(r io.Reader) (uint64, error) {
	var n uint64
	br := bufio.NewReaderSize(r, 1<<20)
	buf := make([]byte, 1<<20)
	for {
		k, err := br.Read(buf)
		n += uint64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// rss is a process's resident memory, bytes (/proc/PID/status VmRSS).
func rss(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// du is the bytes of the files under dir.
func du(dir string) uint64 {
	var n uint64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += uint64(info.Size())
			}
		}
		return nil
	})
	return n
}
