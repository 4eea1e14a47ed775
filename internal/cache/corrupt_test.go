package cache

import (
	"os"
	"slices"
	"testing"
)

func TestCorruptPageIsDroppedNeverReturned(t *testing.T) {
	cfg := testConfig(t, 100)
	c := mustOpen(t, cfg)
	const size = 4 * testPS
	putPages(t, c, "b", size, 0, 4)
	corruptByte(t, c, "b", testPS+123)

	p := make([]byte, size)
	n, err := c.ReadAt("b", p, 0)
	if n != 0 {
		t.Fatalf("ReadAt of a corrupt page returned %d bytes", n)
	}
	wantErr(t, "ReadAt of a corrupt page", err, ErrCorrupt)
	if got, want := c.Missing("b", 0, size), []Range{{testPS, testPS}}; !slices.Equal(got, want) {
		t.Fatalf("Missing after the corruption = %v, want %v", got, want)
	}
	_, err = c.ReadAt("b", p[:10], testPS)
	wantErr(t, "ReadAt of the dropped page", err, ErrMiss)
	checkRead(t, c, "b", size, 0, testPS) // the other pages are fine
	if s := c.Stats(); s.Corruptions != 1 || s.Pages != 3 || s.Used != 3*testPS {
		t.Fatalf("stats %+v", s)
	}

	// The drop is recorded: a restart does not bring the page back.
	c.Close()
	c = mustOpen(t, cfg)
	defer c.Close()
	if got, want := c.Missing("b", 0, size), []Range{{testPS, testPS}}; !slices.Equal(got, want) {
		t.Fatalf("Missing after a restart = %v, want %v", got, want)
	}
	// Fetching it again fixes it.
	putPages(t, c, "b", size, 0, 4)
	checkRead(t, c, "b", size, 0, size)
}

func TestCorruptPartialRead(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	putPages(t, c, "b", 2*testPS, 0, 2)
	corruptByte(t, c, "b", testPS+4000)
	// A read of a few bytes of the page checks the whole page.
	_, err := c.ReadAt("b", make([]byte, 8), testPS)
	wantErr(t, "small ReadAt of a corrupt page", err, ErrCorrupt)
	_, err = c.Acquire("b", testPS, 8)
	wantErr(t, "Acquire of the dropped page", err, ErrMiss)
}

func TestTruncatedDataFileIsCorrupt(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	putPages(t, c, "b", 3*testPS, 0, 3)
	if err := os.Truncate(c.testBlock("b").dataPath(), 2*testPS+10); err != nil {
		t.Fatal(err)
	}
	_, err := c.ReadAt("b", make([]byte, 3*testPS), 0)
	wantErr(t, "ReadAt of a truncated page", err, ErrCorrupt)
	checkRead(t, c, "b", 3*testPS, 0, 2*testPS)
}

func TestShortCircuitReaderInvalidates(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	putPages(t, c, "b", 3*testPS, 0, 3)
	h, err := c.Acquire("b", 0, 3*testPS)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	corruptByte(t, c, "b", 2*testPS+1)
	if _, err := h.ReadChunk(1, nil); err != nil {
		t.Fatalf("good page: %v", err)
	}
	_, err = h.ReadChunk(2, nil)
	wantErr(t, "ReadChunk of a corrupt chunk", err, ErrCorrupt)
	off, n := h.ChunkSpan(2)
	c.Invalidate("b", off, n)
	if got, want := c.Missing("b", 0, 3*testPS), []Range{{2 * testPS, testPS}}; !slices.Equal(got, want) {
		t.Fatalf("Missing after Invalidate = %v, want %v", got, want)
	}
	if s := c.Stats(); s.Corruptions != 1 {
		t.Fatalf("corruptions %d", s.Corruptions)
	}
}
