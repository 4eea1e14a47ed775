package fsshell

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Every byte a command moves (-put, -get, -cp, -cat, -tail) goes through
// transfer, one buffer at a time: with the client's read-ahead (4 MiB) and
// send chunk (1 MiB) that bounds a copy's memory whatever the file's size.
const copyBufSize = 1 << 20

// Progress bars. Hadoop draws none; a transfer of defaultProgressMin bytes
// or more draws one on standard error when standard error is a terminal, so
// that output to a pipe, a file or a script is exactly Hadoop's. The bar is
// erased when the transfer ends. Setting noProgressEnv to anything turns
// the bars off.
const (
	defaultProgressMin = 64 << 20
	noProgressEnv      = "STRATA_NO_PROGRESS"
)

// readError marks a failure to read the source of a transfer, so that it
// is reported against the source rather than the target.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// transfer copies src to dst and returns how many bytes it moved. size is
// src's expected length (-1: unknown), label names it on the progress bar.
// A failure to read src is a *readError; any other failure is dst's.
func (sh *shell) transfer(dst io.Writer, src io.Reader, size int64, label string) (int64, error) {
	if bar := sh.progressBar(size, label); bar != nil {
		defer func() { _ = bar.Clear() }() // a failed transfer leaves it drawn
		src = &metered{r: src, bar: bar}
	}
	if sh.copyBuf == nil {
		sh.copyBuf = make([]byte, copyBufSize)
	}
	var n int64
	for {
		k, rerr := src.Read(sh.copyBuf)
		if k > 0 {
			if _, err := dst.Write(sh.copyBuf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return n, nil
		case rerr != nil:
			return n, &readError{rerr}
		}
	}
}

// progressBar returns the bar of a transfer of size bytes, or nil when
// none is to be drawn.
func (sh *shell) progressBar(size int64, label string) *progressbar.ProgressBar {
	if sh.progressMin <= 0 || size < sh.progressMin || !sh.isTerminal(sh.errw) {
		return nil
	}
	_ = sh.out.Flush()
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(sh.errw),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionClearOnFinish())
}

// metered counts what is read on a progress bar.
type metered struct {
	r   io.Reader
	bar *progressbar.ProgressBar
}

func (m *metered) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	// NB: the bar's errors (a source longer than it said, a closed
	// stderr) must not fail the copy.
	_ = m.bar.Add64(int64(n))
	return n, err
}

// isTerminal is the shell's default: a bar only on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// sleepCtx is the shell's default pause: d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
