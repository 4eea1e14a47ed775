package worker

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// A budget lets takers in while the bytes they take are free, in the order
// they asked, and gives bytes back as they are read.
func TestByteBudget(t *testing.T) {
	b := newByteBudget(8)
	if got := b.take(20); got != 8 { // more than the whole budget: all of it
		t.Fatalf("took %d of a budget of 8, want 8", got)
	}
	b.give(8)
	if b.take(5) != 5 {
		t.Fatal("a free budget did not let 5 bytes in")
	}
	order := make(chan int, 2)
	started := make(chan struct{}, 2)
	for i, n := range []int64{4, 2} { // 4 asks first: 2 must not pass it
		go func() {
			started <- struct{}{}
			b.take(n)
			order <- i
		}()
		<-started
		waitForWaiters(b, i+1)
	}
	r := &budgetReader{Reader: bytes.NewReader(make([]byte, 5)), b: b, left: 5}
	if _, err := io.ReadFull(r, make([]byte, 2)); err != nil { // 3+2 free: the 4-byte taker goes
		t.Fatal(err)
	}
	if first := <-order; first != 0 {
		t.Fatalf("taker %d went first, want the one that asked first", first)
	}
	b.mu.Lock()
	free, waiting := b.mu.free, len(b.mu.waiters)
	b.mu.Unlock()
	if free != 1 || waiting != 1 {
		t.Fatalf("%d bytes free and %d waiting, want 1 and the 2-byte taker", free, waiting)
	}
	r.close() // the other 3 bytes: 1 + 3 free
	if second := <-order; second != 1 {
		t.Fatalf("taker %d went second", second)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.free != 2 { // 8 - 4 - 2
		t.Fatalf("%d bytes free, want 2", b.mu.free)
	}
}

// waitForWaiters returns once b has n takers waiting (they queue under
// its lock, so this only reads what take wrote).
func waitForWaiters(b *byteBudget, n int) {
	for {
		b.mu.Lock()
		k := len(b.mu.waiters)
		b.mu.Unlock()
		if k >= n {
			return
		}
		runtime.Gosched()
	}
}
