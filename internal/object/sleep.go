package object

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends if that comes first, and then returns
// ctx.Err(): nil when the whole of d passed. A d that is not positive does
// not wait. It is the one wait of the wrappers (retry's backoff, throttle's
// latency, faulty's injected delays), so that a cancelled caller never sits
// out a delay.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
