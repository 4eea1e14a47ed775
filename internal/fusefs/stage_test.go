package fusefs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
)

// TestStageAgainstModel: random writes and truncates of a stage with no
// base (a new file), each followed by a read of the whole, against a byte
// slice. The spans' merging and cutting are where TestFSX found a lost
// write (a cut through a span dropped the span).
func TestStageAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		f, err := os.CreateTemp(t.TempDir(), "stage")
		if err != nil {
			t.Fatal(err)
		}
		s := &stage{f: f, budget: &stageBudget{}}
		var model []byte
		rnd := rand.New(rand.NewPCG(seed, 1))
		for i := range 200 {
			if rnd.IntN(4) == 0 {
				n := rnd.Int64N(1 << 16)
				s.truncate(n)
				model = resize(model, n)
			} else {
				off, n := rnd.Int64N(1<<16), 1+rnd.IntN(4096)
				p := bytes.Repeat([]byte{byte(i + 1)}, n)
				if e := s.write(p, off); e != 0 {
					t.Fatal(e)
				}
				model = resize(model, max(int64(len(model)), off+int64(n)))
				copy(model[off:], p)
			}
			got := make([]byte, s.size)
			if n, err := s.readAt(got, 0); err != nil || int64(n) != s.size || !bytes.Equal(got, model) {
				t.Fatalf("seed %d, step %d: %d bytes (%v), want %d; spans %v", seed, i, n, err, len(model), s.dirty)
			}
		}
		s.close()
	}
}

func resize(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}
