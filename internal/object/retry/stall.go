package retry

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// errStalled is the cancel cause of an attempt that made no progress for
// Policy.StallTimeout.
var errStalled = errors.New("retry: attempt stalled")

// watched reports whether op's attempts are abandoned when they stall. Copy
// and CompleteMultipart are not: the store works on its side (copying,
// assembling parts) for as long as the object is large, with no byte to
// show for it; AttemptTimeout bounds them.
func watched(op object.Op) bool {
	return op != object.OpCopy && op != object.OpCompleteMultipart
}

// watchdog cancels an attempt that makes no progress for stall: no byte of
// a request body taken by the transport, no byte of a response body
// delivered, no answer at all. It counts only while someone waits on the
// store (armed): a Get's reader that its caller does not read from for a
// while is not stalled. Its methods are safe for concurrent use, and do
// nothing on a nil watchdog (stall detection off).
type watchdog struct {
	stall  time.Duration
	cancel context.CancelCauseFunc
	timer  *time.Timer
	last   atomic.Int64 // UnixNano of the last progress, or of arming
	armed  atomic.Bool
	done   atomic.Bool
}

// newWatchdog returns an armed watchdog over an attempt that cancel ends,
// or nil if stall is not positive.
func newWatchdog(stall time.Duration, cancel context.CancelCauseFunc) *watchdog {
	if stall <= 0 {
		return nil
	}
	w := &watchdog{stall: stall, cancel: cancel}
	w.arm()
	w.timer = time.AfterFunc(stall, w.check)
	return w
}

func (w *watchdog) check() {
	if w.done.Load() {
		return
	}
	idle := time.Duration(time.Now().UnixNano() - w.last.Load())
	if w.armed.Load() && idle >= w.stall {
		w.cancel(errStalled)
		return
	}
	w.timer.Reset(max(w.stall-idle, time.Millisecond))
}

// arm starts counting from now.
func (w *watchdog) arm() {
	if w != nil {
		w.touch()
		w.armed.Store(true)
	}
}

// disarm stops counting until the next arm.
func (w *watchdog) disarm() {
	if w != nil {
		w.armed.Store(false)
	}
}

// touch records progress.
func (w *watchdog) touch() {
	if w != nil {
		w.last.Store(time.Now().UnixNano())
	}
}

// stop ends the watch for good.
func (w *watchdog) stop() {
	if w != nil {
		w.done.Store(true)
		w.timer.Stop()
	}
}

// sendBody is a request body that reports each byte the transport takes as
// progress. It keeps Seek (the SDK rewinds a body after hashing it) and
// ReadAt of the section it wraps.
type sendBody struct {
	*io.SectionReader
	w *watchdog
}

func (b sendBody) Read(p []byte) (int, error) {
	n, err := b.SectionReader.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

// streamBody is sendBody for a body that can be read only once.
type streamBody struct {
	r io.Reader
	w *watchdog
}

func (b streamBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

// attemptReader is the body of one Get attempt: each Read is watched while
// it waits for the store, and the attempt's context lives until Close.
type attemptReader struct {
	object.Reader
	s         *store
	ctx, actx context.Context
	key       string
	cancel    context.CancelCauseFunc
	w         *watchdog
}

func (r *attemptReader) Read(p []byte) (int, error) {
	r.w.arm()
	n, err := r.Reader.Read(p)
	r.w.disarm()
	if err != nil && err != io.EOF {
		err = r.s.timeoutErr(r.ctx, r.actx, object.OpGet, r.key, err)
	}
	return n, err
}

func (r *attemptReader) Close() error {
	err := r.Reader.Close()
	r.w.stop()
	r.cancel(nil)
	return err
}
