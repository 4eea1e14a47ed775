package client

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/workers.txt's choices from the Go client's")

// workerChoiceFile holds the worker choices that the Go and the Java client
// must both make (its header says how).
const workerChoiceFile = "testdata/workers.txt"

// The worker choices of workerChoiceFile, the Java client's too: which
// workers a read tries, and a write, in which order, and whether the first
// is read or written short-circuit. With -update, what follows each "->"
// is rewritten from this client's choices.
func TestWorkerChoice(t *testing.T) {
	b, err := os.ReadFile(workerChoiceFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	ch := newWorkerChoice(t)
	for i, line := range lines {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, want, isChoice := strings.Cut(line, " ->")
		if !isChoice {
			if err := ch.set(strings.Fields(line)); err != nil {
				t.Fatalf("%s:%d: %s: %v", workerChoiceFile, i+1, line, err)
			}
			continue
		}
		got, err := ch.choose(strings.Fields(head))
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", workerChoiceFile, i+1, line, err)
		}
		if *update {
			lines[i] = head + " -> " + got
		} else if strings.TrimSpace(want) != got {
			t.Errorf("%s:%d: %s: the Go client chooses %s", workerChoiceFile, i+1, line, got)
		}
	}
	if *update {
		if err := os.WriteFile(workerChoiceFile, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// workerChoice is the state of workerChoiceFile's lines: a client's
// worker set and the live workers.
type workerChoice struct {
	c     *Client
	list  []*pb.WorkerInfo
	local *pb.WorkerInfo // a socket that answers hellos as the worker named by id
	id    *atomic.Value
}

func newWorkerChoice(t *testing.T) *workerChoice {
	c := &Client{}
	c.workers.init(c)
	c.cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	var id atomic.Value
	id.Store("")
	return &workerChoice{c: c, local: serveHellos(t, filepath.Join(t.TempDir(), "worker.sock"), &id), id: &id}
}

// set carries out "workers ID...", "local ID", "impostor ID" or
// "short-circuit on|off".
func (ch *workerChoice) set(w []string) error {
	switch {
	case w[0] == "workers":
		ch.list = nil
		for _, id := range w[1:] {
			ch.list = append(ch.list, &pb.WorkerInfo{Id: id, Host: "another-host", UnixSocket: "/nonexistent/" + id + ".sock",
				ScKey: ch.local.ScKey})
		}
		ch.c.cfg.NoShortCircuit = false
		ch.c.workers.mu.sockets = nil
	case (w[0] == "local" || w[0] == "impostor") && len(w) == 2:
		i := slices.IndexFunc(ch.list, func(x *pb.WorkerInfo) bool { return x.Id == w[1] })
		if i < 0 {
			return fmt.Errorf("no worker %s", w[1])
		}
		ch.list[i].UnixSocket = ch.local.UnixSocket
		ch.id.Store(w[1])
		if w[0] == "impostor" {
			ch.id.Store("someone-else")
		}
		ch.c.workers.mu.sockets = nil
	case w[0] == "short-circuit" && len(w) == 2 && (w[1] == "on" || w[1] == "off"):
		ch.c.cfg.NoShortCircuit = w[1] == "off"
	default:
		return fmt.Errorf("unknown line")
	}
	return nil
}

// choose returns the client's choice for "read INODE BLOCK" or "write
// INODE": the workers in order, then "via short-circuit" or "via rpc".
func (ch *workerChoice) choose(w []string) (string, error) {
	var order []*pb.WorkerInfo
	switch {
	case w[0] == "read" && len(w) == 3:
		inode, err1 := strconv.ParseUint(w[1], 10, 64)
		block, err2 := strconv.ParseUint(w[2], 10, 64)
		if err1 != nil || err2 != nil {
			return "", fmt.Errorf("want read INODE BLOCK")
		}
		order = rank(ch.list, inode, block)
	case w[0] == "write" && len(w) == 2:
		inode, err := strconv.ParseUint(w[1], 10, 64)
		if err != nil {
			return "", fmt.Errorf("want write INODE")
		}
		order = ch.c.workers.writerOrder(ch.list, inode)
	default:
		return "", fmt.Errorf("unknown line")
	}
	if len(order) == 0 {
		return "", fmt.Errorf("no workers")
	}
	var s []string
	for _, x := range order {
		s = append(s, x.Id)
	}
	how := "rpc"
	if ch.c.workers.local(order[0]) { // as readFrom and the short-circuit writer choose
		how = "short-circuit"
	}
	return strings.Join(s, " ") + " via " + how, nil
}
