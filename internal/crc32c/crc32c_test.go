package crc32c

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

// check copies src into a buffer offset by dstAlign, with guard bytes
// around it, and compares the copy and the CRC with copy and hash/crc32.
func check(t testing.TB, src []byte, dstAlign int, crc uint32) {
	t.Helper()
	const guard = 16
	buf := bytes.Repeat([]byte{0xa5}, dstAlign+len(src)+2*guard)
	dst := buf[guard+dstAlign : guard+dstAlign+len(src)]
	got := Copy(dst, src, crc)
	if want := crc32.Update(crc, castagnoli, src); got != want {
		t.Fatalf("len %d, dst align %d, crc %#x: Copy gave %#x, hash/crc32 %#x", len(src), dstAlign, crc, got, want)
	}
	if !bytes.Equal(dst, src) {
		t.Fatalf("len %d, dst align %d: dst differs from src", len(src), dstAlign)
	}
	for i, b := range buf {
		if (i < guard+dstAlign || i >= guard+dstAlign+len(src)) && b != 0xa5 {
			t.Fatalf("len %d, dst align %d: byte %d outside dst was written", len(src), dstAlign, i)
		}
	}
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// Every length up to past 4 KiB (every tail, fixed-stretch split and
// fold with its tail), from several alignments of src and dst, by every
// way this CPU has.
func TestEveryLengthAndAlignment(t *testing.T) {
	data := randomBytes(1, 4400+16)
	forEachWay(t, func(t *testing.T) {
		for n := 0; n <= 4400; n++ {
			for _, a := range []struct{ src, dst int }{{0, 0}, {1, 0}, {0, 3}, {5, 7}, {8, 1}, {15, 12}} {
				check(t, data[a.src:a.src+n], a.dst, uint32(n)*0x9e3779b9)
			}
		}
	})
}

// Large buffers, split in thirds of every remainder modulo 192 around the
// shortest split and at page sizes, give the CRC of hash/crc32; so do the
// pieces of one buffer copied call by call, each continuing the last one's
// CRC.
func TestLargeBuffers(t *testing.T) {
	sizes := []int{64 << 10, 1 << 20, 1<<20 + 1, 1<<20 + 4096, 4<<20 - 3, 1<<22 + 4095}
	for n := 12<<10 - 200; n < 12<<10+200; n++ {
		sizes = append(sizes, n)
	}
	srcs := make([][]byte, len(sizes))
	for i, n := range sizes {
		srcs[i] = randomBytes(uint64(n), n+8)
	}
	whole := randomBytes(3, 5<<20)
	forEachWay(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 2))
		for i, n := range sizes {
			check(t, srcs[i][rng.IntN(8):][:n], rng.IntN(8), 0)
		}
		dst := make([]byte, len(whole))
		var crc uint32
		for i := 0; i < len(whole); {
			j := min(len(whole), i+rng.IntN(200000))
			crc = Copy(dst[i:j], whole[i:j], crc)
			i = j
		}
		if want := crc32.Checksum(whole, castagnoli); crc != want || !bytes.Equal(dst, whole) {
			t.Fatalf("piecewise: crc %#x, want %#x (bytes equal: %v)", crc, want, bytes.Equal(dst, whole))
		}
	})
}

// Copy takes as many bytes as the shorter slice holds, as copy does.
func TestUnequalLengths(t *testing.T) {
	src := randomBytes(4, 10000)
	forEachWay(t, func(t *testing.T) {
		dst := make([]byte, 6000)
		if got, want := Copy(dst, src, 0), crc32.Checksum(src[:6000], castagnoli); got != want || !bytes.Equal(dst, src[:6000]) {
			t.Fatalf("longer src: crc %#x, want %#x", got, want)
		}
		dst = make([]byte, 20000)
		if got, want := Copy(dst, src, 7), crc32.Update(7, castagnoli, src); got != want || !bytes.Equal(dst[:10000], src) {
			t.Fatalf("longer dst: crc %#x, want %#x", got, want)
		}
		if Copy(nil, src, 42) != 42 || Copy(dst, nil, 42) != 42 {
			t.Fatal("an empty copy changed the crc")
		}
	})
}

// Update gives hash/crc32's CRC for every length around the point where
// it goes through Copy and around its scratch buffer's length, from any
// alignment, continuing any CRC, by every way this CPU has.
func TestUpdate(t *testing.T) {
	data := randomBytes(9, 200<<10)
	var sizes []int
	for _, c := range []int{0, 100, 4096, 12 << 10, 64 << 10, 128 << 10} {
		for n := max(0, c-70); n <= c+70; n += 7 {
			sizes = append(sizes, n)
		}
	}
	sizes = append(sizes, 60<<10, 200<<10-8)
	forEachWay(t, func(t *testing.T) {
		for i, n := range sizes {
			p := data[i%8:][:n]
			if got, want := Update(uint32(i), p), crc32.Update(uint32(i), castagnoli, p); got != want {
				t.Fatalf("Update of %d bytes: %#x, want %#x", n, got, want)
			}
		}
	})
}

// FuzzCopy checks every way this CPU has on each input.
func FuzzCopy(f *testing.F) {
	f.Add([]byte("hello"), uint32(0), uint8(0))
	f.Add(randomBytes(5, 4041), uint32(0xffffffff), uint8(3))
	f.Add(randomBytes(6, 20000), uint32(1), uint8(9))
	f.Add(randomBytes(7, 1024), uint32(0x9e3779b9), uint8(5))
	f.Add(randomBytes(8, 3*1024+255), uint32(2), uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, crc uint32, dstAlign uint8) {
		for _, w := range ways() {
			restore := w.use()
			check(t, src, int(dstAlign%16), crc)
			restore()
		}
	})
}

// forEachWay runs test once for each way of copying this CPU has, as a
// subtest named after it.
func forEachWay(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	for _, w := range ways() {
		restore := w.use()
		t.Run(w.name, test)
		restore()
	}
}

// The one-pass copy, by each way this CPU has, against copy then
// hash/crc32 (what it replaces) and copy alone, from a source in the CPU's
// caches.
func BenchmarkCopy(b *testing.B) {
	for _, size := range []int{256, 512, 1 << 10, 4 << 10, 64 << 10, 1 << 20} {
		src, dst := randomBytes(6, size), make([]byte, size)
		for _, w := range ways() {
			b.Run(sizeName(size)+"/"+w.name, func(b *testing.B) {
				defer w.use()()
				b.SetBytes(int64(size))
				for b.Loop() {
					Copy(dst, src, 0)
				}
			})
		}
		b.Run(sizeName(size)+"/copy", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
