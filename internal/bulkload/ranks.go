package bulkload

import "math/bits"

// bitset is a set of small integers.
type bitset []uint64

func newBitset(n uint64) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i uint64)      { b[i/64] |= 1 << (i % 64) }

// ranks numbers the members of a set of integers in [lo, lo+span) by
// their order: the smallest is 0. Built by add, then seal.
type ranks struct {
	lo     uint64
	set    bitset
	before []uint32 // members in the words before each word
	n      uint64
}

func newRanks(lo, span uint64) *ranks { return &ranks{lo: lo, set: newBitset(span)} }

// add adds x, and reports false if it was there already or is out of span.
func (r *ranks) add(x uint64) bool {
	i := x - r.lo
	if x < r.lo || i >= uint64(len(r.set))*64 || r.set.has(i) {
		return false
	}
	r.set.set(i)
	r.n++
	return true
}

// seal makes rank usable; add may not follow.
func (r *ranks) seal() {
	r.before = make([]uint32, len(r.set))
	var n uint32
	for i, w := range r.set {
		r.before[i] = n
		n += uint32(bits.OnesCount64(w))
	}
}

// rank returns x's number, and whether x is a member.
func (r *ranks) rank(x uint64) (uint64, bool) {
	i := x - r.lo
	if x < r.lo || i >= uint64(len(r.set))*64 {
		return 0, false
	}
	w := r.set[i/64]
	bit := uint64(1) << (i % 64)
	return uint64(r.before[i/64]) + uint64(bits.OnesCount64(w&(bit-1))), w&bit != 0
}
