package testhosts_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/lincheck"
	"github.com/stratafs/strata/internal/procgroup"
	"github.com/stratafs/strata/internal/testhosts"
)

// A load is the test binary started again on a client's host (the helper's
// "load" mode): clients of their own, each running random operations of
// lincheck's model on its group until SIGTERM, and every operation called
// and answered a line of JSON (lincheck.Event) on stdout, which the test
// adds to its history. An operation whose answer the model cannot predict
// comes as an event with Err set.

// loadEvent is a line of a load's stream.
type loadEvent struct {
	lincheck.Event
	Err string `json:"err,omitempty"`
}

// loadFileSize is the size of the files a load publishes: past the inline
// limit (4 KiB), so that their content goes through a worker to the bucket.
const loadFileSize = 64<<10 + 17

// opTimeout bounds each operation of a load: one cut off from the service
// gives up and tries another.
const opTimeout = 10 * time.Second

// runLoad is the helper's "load" mode. $STRATA_META and $STRATA_TOKEN say
// the service, $LOAD_CLIENTS the clients' ids (comma-separated), $LOAD_GROUPS
// how many groups there are (client id modulo groups is its group),
// $LOAD_SEED the seed of their random operations.
func runLoad() int {
	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	groups, _ := strconv.Atoi(os.Getenv("LOAD_GROUPS"))
	seed, _ := strconv.ParseUint(os.Getenv("LOAD_SEED"), 10, 64)
	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	emit := func(e loadEvent) {
		mu.Lock()
		defer mu.Unlock()
		_ = out.Encode(e)
	}
	var wg sync.WaitGroup
	for _, s := range strings.Split(os.Getenv("LOAD_CLIENTS"), ",") {
		id, err := strconv.Atoi(s)
		if err != nil || groups <= 0 {
			fmt.Fprintln(os.Stderr, "load: bad $LOAD_CLIENTS or $LOAD_GROUPS")
			return 2
		}
		var umask uint32 // the model's mkdir makes the permission asked
		c, err := client.New(client.Config{Meta: os.Getenv("STRATA_META"), Token: os.Getenv("STRATA_TOKEN"), Umask: &umask})
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			return 1
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			loadClient(stop, c, id, id%groups, rand.New(rand.NewPCG(seed, uint64(id))), emit)
		}()
	}
	wg.Wait()
	return 0
}

// loadClient runs client id's operations on group until stop ends; the
// operation under way finishes first.
func loadClient(stop context.Context, c *client.Client, id, group int, r *rand.Rand, emit func(loadEvent)) {
	run := &lincheck.Runner{C: c, Scratch: scratchDir(id), Size: loadFileSize}
	for n := int64(1); stop.Err() == nil; n++ {
		in := lincheck.Random(r, group, int64(id)<<32|n, true)
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		if in.Kind == lincheck.Publish && run.Prepare(ctx, in) != nil {
			cancel()
			continue // its content never reached a file: nothing of it is in the model
		}
		emit(loadEvent{Event: lincheck.Event{Client: id, ID: n, In: &in, At: lincheck.Now()}})
		out, err := run.Do(ctx, in)
		cancel()
		e := loadEvent{Event: lincheck.Event{Client: id, ID: n, Out: &out, At: lincheck.Now()}}
		if err != nil {
			e.Err = err.Error()
		}
		emit(e)
	}
}

// scratchDir is where client id writes the files it publishes.
func scratchDir(id int) string { return fmt.Sprintf("/scratch/c%d", id) }

// load is a load's process, as the test sees it.
type load struct {
	host *testhosts.Host
	ids  []int
	p    *procgroup.Process
	done chan struct{} // its stream read to the end
	mu   sync.Mutex
	logs []string // what it said besides events, the last lines
}

// startLoad starts clients ids on host h, their events added to hist.
func startLoad(t *testing.T, h *testhosts.Host, hist *lincheck.History, meta, token string, ids []int,
	groups int, seed uint64) *load {
	t.Helper()
	var s []string
	for _, id := range ids {
		s = append(s, strconv.Itoa(id))
	}
	for k, v := range map[string]string{"STRATA_TESTHOSTS_HELPER": "load", "STRATA_META": meta, "STRATA_TOKEN": token,
		"LOAD_CLIENTS": strings.Join(s, ","), "LOAD_GROUPS": strconv.Itoa(groups), "LOAD_SEED": strconv.FormatUint(seed, 10)} {
		t.Setenv(k, v)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &load{host: h, ids: ids, done: make(chan struct{})}
	l.p, err = h.Start(os.Args[0], nil, w)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.p.Kill)
	go l.read(t, r, hist)
	return l
}

// read adds the load's events to hist until its stream ends.
func (l *load) read(t *testing.T, r *os.File, hist *lincheck.History) {
	defer close(l.done)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e loadEvent
		if !strings.HasPrefix(sc.Text(), "{") || json.Unmarshal(sc.Bytes(), &e) != nil {
			l.mu.Lock()
			l.logs = append(l.logs[max(0, len(l.logs)-20):], sc.Text())
			l.mu.Unlock()
			continue
		}
		if e.Err != "" {
			t.Errorf("client %d on %s: an answer the model cannot predict: %s", e.Client, l.host.Name, e.Err)
		}
		hist.Add(e.Event)
	}
}

// stop ends the load once its operations under way are answered, and
// waits for the last of its stream.
func (l *load) stop(t *testing.T) {
	t.Helper()
	l.p.Stop()
	<-l.done
	if err := l.p.Wait(); err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Errorf("the load on %s: %v\n%s", l.host.Name, err, strings.Join(l.logs, "\n"))
	}
}
