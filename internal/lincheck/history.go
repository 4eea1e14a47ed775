package lincheck

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"golang.org/x/sys/unix"
)

// Now is the time operations are stamped with: CLOCK_MONOTONIC, in
// nanoseconds, which every process on the machine reads alike (a client
// process's stamps and the test's compare), and which no clock step moves.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // not on Linux
	}
	return ts.Nano()
}

// Event is one line of a client process's stream: an operation called
// (In set) or answered (Out set), by the client's own id for it.
type Event struct {
	Client int     `json:"c"`
	ID     int64   `json:"id"`
	In     *Input  `json:"in,omitempty"`
	Out    *Output `json:"out,omitempty"`
	At     int64   `json:"t"` // Now()
}

// History is the operations of a run, each from its call to its answer.
// An operation never answered (its client died, or it is still out when
// the history is checked) is an unknown one. Safe for concurrent use.
type History struct {
	mu struct {
		sync.Mutex
		ops      []porcupine.Operation
		open     map[[2]int64]int // operations called, not answered: by client and id, their index in ops
		answered int
		unknown  int
		last     map[int]int64 // by client: the call time of its latest answered operation
		seq      int64
	}
}

// Call records in called by client now and returns its id.
func (h *History) Call(client int, in Input) int64 {
	h.mu.Lock()
	h.mu.seq++
	id := h.mu.seq
	h.mu.Unlock()
	h.Add(Event{Client: client, ID: id, In: &in, At: Now()})
	return id
}

// Return records the answer to client's operation id, now.
func (h *History) Return(client int, id int64, out Output) {
	h.Add(Event{Client: client, ID: id, Out: &out, At: Now()})
}

// Add records an event, as Call and Return do; a client process's stream
// comes in this way. An answer to an operation not called is ignored.
func (h *History) Add(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.open == nil {
		h.mu.open, h.mu.last = map[[2]int64]int{}, map[int]int64{}
	}
	key := [2]int64{int64(e.Client), e.ID}
	if e.In != nil {
		h.mu.open[key] = len(h.mu.ops)
		h.mu.ops = append(h.mu.ops, porcupine.Operation{ClientId: e.Client, Input: *e.In, Call: e.At,
			Output: Output{Unknown: true}, Return: math.MaxInt64})
		return
	}
	i, ok := h.mu.open[key]
	if !ok || e.Out == nil {
		return
	}
	delete(h.mu.open, key)
	op := &h.mu.ops[i]
	op.Output = *e.Out
	if e.Out.Unknown {
		h.mu.unknown++ // linearizable anywhere after its call: its return stays open
		return
	}
	op.Return = e.At
	h.mu.answered++
	h.mu.last[e.Client] = max(h.mu.last[e.Client], op.Call)
}

// Counts returns how many operations were called, answered, and ended
// without an answer.
func (h *History) Counts() (called, answered, unknown int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.mu.ops), h.mu.answered, h.mu.unknown + len(h.mu.open)
}

// GivenUp returns how many operations ended without an answer so far
// (not counting those still out).
func (h *History) GivenUp() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.unknown
}

// AnsweredSince reports whether client had an operation called at t or
// later answered.
func (h *History) AnsweredSince(client int, t int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	last, ok := h.mu.last[client]
	return ok && last >= t
}

// Check checks the history against Model, for at most timeout. An illegal
// history's visualisation (porcupine's HTML) goes to dir/history.html, and
// its operations, a line of JSON each, to dir/history.jsonl, if dir is not
// empty.
func (h *History) Check(timeout time.Duration, dir string) (porcupine.CheckResult, error) {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.mu.ops...)
	h.mu.Unlock()
	res, info := porcupine.CheckOperationsVerbose(Model, ops, timeout)
	if res != porcupine.Illegal || dir == "" {
		return res, nil
	}
	var lines []byte
	for _, op := range ops {
		in, out := op.Input.(Input), op.Output.(Output)
		b, _ := json.Marshal(struct {
			Client       int
			Call, Return int64
			In           Input
			Out          Output
		}{op.ClientId, op.Call, op.Return, in, out})
		lines = append(append(lines, b...), '\n')
	}
	return res, errors.Join(porcupine.VisualizePath(Model, info, filepath.Join(dir, "history.html")),
		os.WriteFile(filepath.Join(dir, "history.jsonl"), lines, 0o644))
}
