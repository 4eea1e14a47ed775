// Package faulty wraps an object.Store to inject the failures real object
// stores produce: errors, 503 SlowDown throttling, requests that hang, bodies
// cut short, and added latency. Tests use it to drive the retry layer and the
// data path through failure, deterministically (a seeded random source, or
// every Nth call), and turn fault storms on and off while work is running.
//
// It only injects; it never retries or hides a failure. Faults enter through
// the same Store interface as real I/O, as STYLE rule 10 asks.
package faulty

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Kind is what a rule does when it fires.
type Kind int

const (
	// Error fails the call with Rule.Err (default object.ErrTransient).
	Error Kind = iota
	// Throttle fails the call as S3's 503 SlowDown does (object.ErrThrottled).
	Throttle
	// Timeout hangs the call: until its context is done if Rule.Delay is 0,
	// else for Delay, then it fails with object.ErrTimeout.
	Timeout
	// ShortRead (Get and GetVersion only) hands out a reader that delivers Rule.Bytes bytes
	// (0: a random count below 64 KiB) and then fails with a transient
	// io.ErrUnexpectedEOF, as a connection dropped mid-body does.
	ShortRead
	// Latency delays the call by Rule.Delay, then lets it through. Latency
	// rules add up; they combine with one other fault.
	Latency
)

// Rule says which calls fail and how. The zero value of each matching field
// matches everything, and a rule with neither Prob nor Every fires on every
// matching call.
type Rule struct {
	Kind   Kind
	Ops    []object.Op // the operations it applies to; empty: all
	Prefix string      // keys it applies to (listings: their prefix; Copy: its source)

	Prob  float64 // fire with this probability, from the injector's seeded source
	Every int     // or fire on every Nth matching call
	Times int     // stop after firing this many times; 0: never stop

	// After runs the operation before failing it, as when a response is
	// lost: the store changed, the caller cannot know. For Error, Throttle
	// and Timeout.
	After bool

	Err   error         // for Error
	Delay time.Duration // for Timeout and Latency
	Bytes int64         // for ShortRead
}

// Injector holds the rules shared by the stores wrapped with it. Rules can
// be changed at any time, also while calls are in flight.
type Injector struct {
	fired atomic.Int64
	mu    struct {
		sync.Mutex
		rules []*ruleState
		rng   *rand.Rand
	}
}

type ruleState struct {
	Rule
	calls, fired int
}

// NewInjector returns an injector with no rules whose random choices follow
// seed.
func NewInjector(seed uint64) *Injector {
	in := &Injector{}
	in.mu.rng = rand.New(rand.NewPCG(seed, seed^0x5eed))
	return in
}

// Set replaces all rules.
func (in *Injector) Set(rules ...Rule) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.mu.rules = nil
	in.addLocked(rules)
}

// Add appends rules to those in force.
func (in *Injector) Add(rules ...Rule) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.addLocked(rules)
}

func (in *Injector) addLocked(rules []Rule) {
	for _, r := range rules {
		in.mu.rules = append(in.mu.rules, &ruleState{Rule: r})
	}
}

// Clear removes all rules: calls pass through untouched from now on.
func (in *Injector) Clear() { in.Set() }

// Fired returns how many faults (latency included) have been injected, so
// tests can tell that a storm really happened.
func (in *Injector) Fired() int64 { return in.fired.Load() }

// fault is what pick decided for one call.
type fault struct {
	delay time.Duration // total added latency
	rule  *Rule         // the failure to inject, or nil
	bytes int64         // for ShortRead, resolved
}

// pick decides the faults of one call of op on key.
func (in *Injector) pick(op object.Op, key string) fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	var f fault
	for _, r := range in.mu.rules {
		if (f.rule != nil && r.Kind != Latency) || !r.matches(op, key) || !r.fireLocked(in.mu.rng) {
			continue
		}
		in.fired.Add(1)
		if r.Kind == Latency {
			f.delay += r.Delay
			continue
		}
		rule := r.Rule
		f.rule = &rule
		if f.bytes = r.Bytes; r.Kind == ShortRead && f.bytes == 0 {
			f.bytes = in.mu.rng.Int64N(64 << 10)
		}
	}
	return f
}

func (r *ruleState) matches(op object.Op, key string) bool {
	if r.Kind == ShortRead && op != object.OpGet {
		return false
	}
	return (len(r.Ops) == 0 || slices.Contains(r.Ops, op)) && strings.HasPrefix(key, r.Prefix)
}

func (r *ruleState) fireLocked(rng *rand.Rand) bool {
	if r.Times > 0 && r.fired >= r.Times {
		return false
	}
	r.calls++
	fire := true
	switch {
	case r.Every > 0:
		fire = r.calls%r.Every == 0
	case r.Prob > 0:
		fire = rng.Float64() < r.Prob
	}
	if fire {
		r.fired++
	}
	return fire
}

// Mix returns rules for a storm of every kind of fault, a call failing with
// probability about rate (short reads aside, which strike Gets at twice that
// rate), for tests that check work gets done through the retry layer. Its
// timeouts last a millisecond, so no attempt timeout is needed to end them.
func Mix(rate float64) []Rule {
	mutations := []object.Op{object.OpPut, object.OpDelete, object.OpCopy, object.OpUploadPart,
		object.OpCompleteMultipart, object.OpAbortMultipart}
	return []Rule{
		{Kind: Latency, Prob: rate, Delay: 20 * time.Microsecond},
		{Kind: Error, Prob: rate * 0.4},
		{Kind: Throttle, Prob: rate * 0.3},
		{Kind: Timeout, Prob: rate * 0.1, Delay: time.Millisecond},
		{Kind: Error, Ops: mutations, After: true, Prob: rate * 0.2},
		{Kind: ShortRead, Prob: rate * 2},
	}
}
