package databench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// pattern is the content of the benchmark's files: file f's byte at offset
// o is pool[(o + shift(f)) mod period]. The pool holds two periods back to
// back, so that any window of up to one period is a slice of it: writers
// hand out slices (no copying or generating in the timed loop) and readers
// compare with slices.
//
// NB: the period is odd, so a read served from a wrong offset that is a
// multiple of the page or block size does not find the same bytes there.
type pattern struct {
	pool   []byte
	period int64
}

func newPattern(seed uint64, window int) *pattern {
	period := int64(max(window, 4<<20)) + 4093
	pool := make([]byte, 2*period)
	rng := rand.NewChaCha8(seedBytes(seed))
	_, _ = rng.Read(pool[:period])
	copy(pool[period:], pool[:period])
	return &pattern{pool: pool, period: period}
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 4 {
		x := seed + uint64(i)*0x9e3779b97f4a7c15
		for j := range 8 {
			s[i*8+j] = byte(x >> (8 * j))
		}
	}
	return s
}

// at returns the n bytes of file f at offset off; n must not exceed the
// window the pattern was made for.
func (p *pattern) at(f int, off int64, n int) []byte {
	s := (off + int64(f)*1_000_003) % p.period
	return p.pool[s : s+int64(n)]
}

// spot is how many bytes at each end of a read are always checked.
const spot = 64

// check compares got, read from file f at off, with the pattern: all of it
// if full, else its first and last bytes.
func (p *pattern) check(name string, f int, off int64, got []byte, full bool) error {
	want := p.at(f, off, len(got))
	ok := true
	if full || len(got) <= 2*spot {
		ok = bytes.Equal(got, want)
	} else {
		n := len(got)
		ok = bytes.Equal(got[:spot], want[:spot]) && bytes.Equal(got[n-spot:], want[n-spot:])
	}
	if !ok {
		return fmt.Errorf("databench: %s: wrong bytes read at %d+%d", name, off, len(got))
	}
	return nil
}
