package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client/clienttest"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

// The failover, retry and batching scripts of testdata/scripts (the
// language: its README), which the Java client runs too (java/core's
// ScriptTest), each over callwire and over gRPC, against fake members
// (clienttest). A behaviour of one client changed and not the other's
// fails the other's run, or this one.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		for _, transport := range []string{"callwire", "grpc"} {
			name := strings.TrimSuffix(filepath.Base(f), ".txt") + "/" + transport
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runScript(t, f, transport == "grpc")
			})
		}
	}
}

// scriptLine is a line of a script: its number, its text and its words.
type scriptLine struct {
	n     int
	text  string
	words []string
}

// readScript returns the lines of a script that say something: comments
// ("#" to the end of a line) and blank lines dropped.
func readScript(t *testing.T, file string) []scriptLine {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []scriptLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		if w := strings.Fields(text); len(w) > 0 {
			out = append(out, scriptLine{n, strings.TrimSpace(text), w})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scriptRun is one run of a script: its members, its client, and the
// calls it started in the background, by name.
type scriptRun struct {
	g        *clienttest.Group
	c        *Client
	grpcOnly bool
	calls    map[string]chan string // each call's outcome, once it ends
}

func runScript(t *testing.T, file string, grpcOnly bool) {
	r := &scriptRun{g: clienttest.NewGroup(t), grpcOnly: grpcOnly, calls: map[string]chan string{}}
	t.Cleanup(func() {
		if r.c != nil {
			r.c.Close()
		}
	})
	for _, l := range readScript(t, file) {
		if err := r.step(l.words); err != nil {
			t.Fatalf("%s:%d: %s: %v", file, l.n, l.text, err)
		}
	}
	if err := r.g.Unchecked(); err != nil {
		t.Fatalf("%s: at its end: %v", file, err)
	}
}

// step carries out one line.
func (r *scriptRun) step(w []string) error {
	switch w[0] {
	case "members":
		return r.g.Start(w[1:]...)
	case "workers":
		return r.g.StartWorkers(w[1:]...)
	case "client":
		return r.client(w[1:])
	case "call":
		if err := r.g.Unchecked(); err != nil {
			return err
		}
		call, want, err := arrow(w[1:])
		if err != nil {
			return err
		}
		return sameOutcome(r.do(call), want)
	case "go":
		if len(w) < 3 || r.calls[w[1]] != nil {
			return errors.New("want go NAME CALL, NAME new")
		}
		done := make(chan string, 1)
		r.calls[w[1]] = done
		go func() { done <- r.do(w[2:]) }()
		return nil
	case "wait":
		return r.wait(w[1:])
	}
	return r.g.Do(w)
}

// client makes the client: "client m1 m2 [inflight=N]".
func (r *scriptRun) client(w []string) error {
	cfg := Config{RetryTimeout: 20 * time.Second, User: "alice", GRPCOnly: r.grpcOnly}
	var addrs []string
	for _, a := range w {
		if v, ok := strings.CutPrefix(a, "inflight="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("inflight=%s: want a count", v)
			}
			cfg.BatchesInFlight = n
			if n == 0 {
				cfg.BatchesInFlight = -1 // every call alone
			}
			continue
		}
		addr := r.g.Member(a)
		if addr == nil {
			return fmt.Errorf("no member %q", a)
		}
		addrs = append(addrs, addr.Addr())
	}
	cfg.Meta = strings.Join(addrs, ",")
	c, err := New(cfg)
	r.c = c
	return err
}

// wait waits for a call started by "go" ("wait NAME -> OUTCOME"), for calls
// to queue ("wait queued reads|mutations N"), or for a member ("wait m1
// tried N").
func (r *scriptRun) wait(w []string) error {
	if len(w) == 3 && w[0] == "queued" {
		return r.queued(w[1], w[2])
	}
	if r.g.Member(w[0]) != nil {
		return r.g.Do(w)
	}
	name, want, err := arrow(w)
	if err != nil || len(name) != 1 || r.calls[name[0]] == nil {
		return fmt.Errorf("want wait NAME -> OUTCOME, NAME a call started by go")
	}
	select {
	case got := <-r.calls[name[0]]:
		return sameOutcome(got, want)
	case <-time.After(2 * clienttest.Bound):
		return fmt.Errorf("%s did not end within %v", name[0], 2*clienttest.Bound)
	}
}

// queued waits until n calls of a kind wait in the client's coalescer of
// that kind.
func (r *scriptRun) queued(kind, count string) error {
	c := map[string]*coalescer{"reads": r.c.batches.reads, "mutations": r.c.batches.mutations}[kind]
	n, err := strconv.Atoi(count)
	if c == nil || err != nil {
		return errors.New("want wait queued reads|mutations N")
	}
	deadline := time.Now().Add(clienttest.Bound)
	for {
		c.mu.Lock()
		got := len(c.mu.pending)
		c.mu.Unlock()
		if got == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d %s queued within %v, want %d", got, kind, clienttest.Bound, n)
		}
		runtime.Gosched()
	}
}

// arrow splits "WORDS -> OUTCOME".
func arrow(w []string) ([]string, string, error) {
	if len(w) < 3 || w[len(w)-2] != "->" {
		return nil, "", errors.New("want ... -> OUTCOME")
	}
	return w[:len(w)-2], w[len(w)-1], nil
}

func sameOutcome(got, want string) error {
	if got != want {
		return fmt.Errorf("the call's outcome is %s, want %s", got, want)
	}
	return nil
}

// do makes a call of the client: "stat P", "mkdirs P", "delete P", "rename
// S D", "read P" (open, and read to the end); it returns its outcome.
func (r *scriptRun) do(w []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*clienttest.Bound)
	defer cancel()
	var err error
	switch {
	case len(w) == 2 && w[0] == "stat":
		_, err = r.c.Stat(ctx, w[1])
	case len(w) == 2 && w[0] == "mkdirs":
		_, err = r.c.Mkdirs(ctx, w[1], 0o755)
	case len(w) == 2 && w[0] == "delete":
		_, err = r.c.Delete(ctx, w[1], false)
	case len(w) == 3 && w[0] == "rename":
		_, err = r.c.Rename(ctx, w[1], w[2])
	case len(w) == 2 && w[0] == "read":
		_, err = r.c.ReadFile(ctx, w[1])
	default:
		return fmt.Sprintf("unknown call %q", strings.Join(w, " "))
	}
	return outcome(err)
}

// outcome names err as the scripts do: ok, NOT_FOUND, ALREADY_EXISTS,
// UNAVAILABLE (no member answered), or the error itself.
func outcome(err error) string {
	var te *rpcerr.TransportError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, fserr.ErrNotFound):
		return "NOT_FOUND"
	case errors.Is(err, fserr.ErrExists):
		return "ALREADY_EXISTS"
	case errors.Is(err, fserr.ErrNotLeader), errors.Is(err, fserr.ErrUnavailable), errors.As(err, &te):
		return "UNAVAILABLE"
	}
	return "error(" + err.Error() + ")"
}
