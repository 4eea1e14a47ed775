package metaserver

import (
	"testing"
	"time"

	"github.com/stratafs/strata/internal/statemachine"
)

// A cache-mode call's hold outlasts a caller that gave up: it is released
// once the proposal settles, or the member stops, not when the wait ends.
func TestAHoldOutlastsACallerThatGaveUp(t *testing.T) {
	for _, settle := range []string{"applied", "member stopped"} {
		t.Run(settle, func(t *testing.T) {
			p := newProposal(nil)
			stopped := make(chan struct{})
			released := make(chan struct{})
			releaseWhenSettled(p, stopped, func() { close(released) })
			select {
			case <-released:
				t.Fatal("released before the proposal settled")
			default:
			}
			if settle == "applied" {
				p.finish(statemachine.Result{}, nil)
			} else {
				close(stopped)
			}
			select {
			case <-released:
			case <-time.After(30 * time.Second): // a bound for a broken test
				t.Fatal("not released once the proposal settled")
			}
		})
	}
	p := newProposal(nil)
	p.finish(statemachine.Result{}, nil)
	released := false
	releaseWhenSettled(p, nil, func() { released = true })
	if !released {
		t.Fatal("a settled proposal's hold was not released at once")
	}
	releaseWhenSettled(nil, nil, func() { released = false })
	if released {
		t.Fatal("a call that proposed nothing: its hold was not released at once")
	}
}
