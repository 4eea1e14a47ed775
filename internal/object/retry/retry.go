// Package retry is the one layer of Strata that retries object-store
// requests. Backends make one attempt per call (the S3 SDK's retryer is off)
// and wrappers such as faulty and throttle never retry; a retry anywhere else
// would multiply attempts under a storm and hide throttling from here. Wrap
// the outermost Store a worker uses with New, once.
//
// It retries what object.IsRetryable says may pass (throttling, timeouts,
// transient failures, reset connections, bodies cut short) with capped
// exponential backoff and jitter, within a maximum number of attempts and an
// optional time budget. An attempt that makes no progress for StallTimeout
// (a store that stopped answering: a hung server, a black-holed network) is
// abandoned and retried like a timeout. Everything else, object.ErrNotFound or the caller's
// own cancellation first among them, returns at once. A Get whose body breaks
// midway resumes from the first byte not yet delivered, invisibly to the
// reader, on the version (ETag) it started with: if that version is gone,
// the read fails with object.ErrChanged rather than mix two versions.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Policy bounds the retries of one operation. The zero value is usable.
type Policy struct {
	// MaxAttempts counts all attempts, the first one included; default 8.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry, doubling for each
	// retry after it up to MaxDelay; defaults 50ms and 5s. A throttled
	// attempt backs off twice as long.
	BaseDelay, MaxDelay time.Duration
	// MaxElapsed, if set, gives up rather than sleep past this much time
	// since the first attempt.
	MaxElapsed time.Duration
	// AttemptTimeout, if set, bounds each attempt (for Get, until the reader
	// is returned); an attempt that runs out is retried as object.ErrTimeout.
	AttemptTimeout time.Duration
	// StallTimeout, if set, abandons an attempt that makes no progress for
	// this long (no byte of its request body taken, none of its response
	// delivered, no answer), retried as object.ErrTimeout. It is not a
	// bound on a transfer that keeps moving, however slowly. A Get's reader
	// counts only while its caller waits in Read. Copy and
	// CompleteMultipart, which the store may work on for long without a
	// byte to show, are bounded by AttemptTimeout alone.
	StallTimeout time.Duration
	// BufferLimit is the largest body that is copied to memory so that it
	// can be sent again, when it is not an io.ReaderAt; default 16 MiB.
	// Larger bodies of that kind get one attempt only.
	BufferLimit int64
	// OnRetry, if set, is called before each backoff, for logs and metrics.
	OnRetry func(op object.Op, key string, attempt int, err error)
}

func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 8
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 50 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 5 * time.Second
	}
	if p.BufferLimit == 0 {
		p.BufferLimit = 16 << 20
	}
	return p
}

// errAttemptTimeout is the cancel cause of an attempt that ran out of time.
var errAttemptTimeout = errors.New("retry: attempt timed out")

// loop makes attempts until one succeeds or the policy gives up. made and
// last describe attempts the caller already made (a broken read counts as
// one), so that budgets carry over; loop returns the number of attempts made
// in all, and nil or the error to report. MaxElapsed counts from start, or
// from now if start is zero.
func (s *store) loop(ctx context.Context, op object.Op, key string, made int, last error, start time.Time, attempt func() error) (int, error) {
	if start.IsZero() {
		start = time.Now()
	}
	if made == 0 {
		made, last = 1, attempt()
	}
	for last != nil {
		delay, err := s.next(ctx, op, key, made, last, start)
		if err != nil {
			return made, err
		}
		if s.p.OnRetry != nil {
			s.p.OnRetry(op, key, made, last)
		}
		if err := object.Sleep(ctx, delay); err != nil {
			return made, object.WrapError(op, key, fmt.Errorf("%w while retrying: %v", err, last))
		}
		made, last = made+1, attempt()
	}
	return made, nil
}

// next returns the backoff before the next attempt, or the error to report
// if there is to be none.
func (s *store) next(ctx context.Context, op object.Op, key string, made int, err error, start time.Time) (time.Duration, error) {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return 0, err
		}
		return 0, object.WrapError(op, key, fmt.Errorf("%w: %w", cerr, err))
	}
	if !object.IsRetryable(err) {
		return 0, err
	}
	if made >= s.p.MaxAttempts {
		return 0, fmt.Errorf("%w (gave up after %d attempts)", err, made)
	}
	delay := s.backoff(made, err)
	if s.p.MaxElapsed > 0 && time.Since(start)+delay > s.p.MaxElapsed {
		return 0, fmt.Errorf("%w (gave up after %d attempts in %v)", err, made, time.Since(start).Round(time.Millisecond))
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
		return 0, fmt.Errorf("%w (no time left to retry before the deadline)", err)
	}
	return delay, nil
}

// backoff is capped exponential with "equal jitter": half fixed, so retries
// do not bunch near zero, half random, so clients that failed together do
// not retry together.
func (s *store) backoff(made int, err error) time.Duration {
	d := s.p.MaxDelay
	if shift := made - 1; shift < 30 {
		d = min(d, s.p.BaseDelay<<shift)
	}
	if errors.Is(err, object.ErrThrottled) {
		d = min(2*d, s.p.MaxDelay) // the store asked us to slow down
	}
	return d/2 + rand.N(d/2+1)
}

// timed runs call as one attempt, with the policy's per-attempt timeout
// and, for watched operations, its stall watch, reporting an attempt that
// ran out or stalled as a retryable object.ErrTimeout.
func (s *store) timed(ctx context.Context, op object.Op, key string, call func(context.Context, *watchdog) error) func() error {
	return func() error {
		stall := s.p.StallTimeout
		if !watched(op) {
			stall = 0
		}
		if s.p.AttemptTimeout <= 0 && stall <= 0 {
			return call(ctx, nil)
		}
		actx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		if s.p.AttemptTimeout > 0 {
			t := time.AfterFunc(s.p.AttemptTimeout, func() { cancel(errAttemptTimeout) })
			defer t.Stop()
		}
		w := newWatchdog(stall, cancel)
		defer w.stop()
		return s.timeoutErr(ctx, actx, op, key, call(actx, w))
	}
}

// timeoutErr replaces err by object.ErrTimeout if the attempt context ran
// out or stalled while the caller's did not. NB: the cause is formatted
// with %v, not wrapped, because a wrapped context.DeadlineExceeded (or
// Canceled) is never retryable.
func (s *store) timeoutErr(ctx, actx context.Context, op object.Op, key string, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	switch context.Cause(actx) {
	case errAttemptTimeout:
		return object.WrapError(op, key, fmt.Errorf("%w: attempt exceeded %v: %v", object.ErrTimeout, s.p.AttemptTimeout, err))
	case errStalled:
		return object.WrapError(op, key, fmt.Errorf("%w: no progress for %v (the store stopped answering?): %v", object.ErrTimeout, s.p.StallTimeout, err))
	}
	return err
}
