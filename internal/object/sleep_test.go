package object_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
)

func TestSleep(t *testing.T) {
	ctx := context.Background()
	if err := object.Sleep(ctx, time.Millisecond); err != nil {
		t.Errorf("a whole sleep: %v", err)
	}
	if err := object.Sleep(ctx, -time.Second); err != nil {
		t.Errorf("no wait: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	start := time.Now()
	for _, d := range []time.Duration{0, time.Hour} {
		if err := object.Sleep(cancelled, d); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled, %v: %v", d, err)
		}
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a cancelled sleep took %v", took)
	}
}
