package crc32c

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// way is one way Copy can go; use switches Copy to it and returns what
// switches it back.
type way struct {
	name string
	use  func() (restore func())
}

// ways are the ways Copy can go on this CPU: copy then hash/crc32 on any;
// CRC32 chains with SSE 4.2; folding with AVX-512 and VPCLMULQDQ.
func ways() []way {
	ws := []way{{"generic", useWay(false, false)}}
	if cpu.X86.HasSSE42 {
		ws = append(ws, way{"chains", useWay(true, false)})
	}
	if canFold {
		ws = append(ws, way{"fold", useWay(true, true)})
	}
	return ws
}

func useWay(chains, fold bool) func() func() {
	return func() func() {
		oldChains, oldFold := sse42, useFold
		sse42, useFold = chains, fold
		return func() { sse42, useFold = oldChains, oldFold }
	}
}

// The ways tested are the ways this CPU has: where /proc/cpuinfo lists
// what folding needs, it is among them and Copy uses it.
func TestWaysOfThisCPU(t *testing.T) {
	var names []string
	for _, w := range ways() {
		names = append(names, w.name)
	}
	t.Logf("ways tested on this CPU: %s", strings.Join(names, ", "))
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("no /proc/cpuinfo to check the detection against: %v", err)
		return
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(info), "\n") {
		if name, list, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			for _, f := range strings.Fields(list) {
				flags[f] = true
			}
			break
		}
	}
	if flags["sse4_2"] && flags["avx512f"] && flags["vpclmulqdq"] && !(canFold && useFold) {
		t.Fatalf("the CPU lists avx512f and vpclmulqdq, but Copy does not fold (canFold %v, useFold %v)", canFold, useFold)
	}
}

// The fold's multipliers carry a 128-bit lane d bits on: the CRC of a
// lane folded (in Go, from the multipliers alone) is the CRC of the lane
// followed by d zero bits.
func TestFoldKeys(t *testing.T) {
	k := foldKeysFor(2048, 512)
	for i, d := range []int{2048, 512} {
		lane := randomBytes(uint64(d), 16)
		a := clmul(binary.LittleEndian.Uint64(lane[:8]), k[2*i])
		b := clmul(binary.LittleEndian.Uint64(lane[8:]), k[2*i+1])
		folded := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, a[0]^b[0]), a[1]^b[1])
		if got, want := rawCRC(folded), rawCRC(append(lane, make([]byte, d/8)...)); got != want {
			t.Fatalf("%d bits: the folded lane's CRC is %#x, want %#x", d, got, want)
		}
	}
}

// clmul is the carry-less product of a and b, low quadword first.
func clmul(a, b uint64) (p [2]uint64) {
	for i := range 64 {
		if b>>i&1 != 0 {
			p[0] ^= a << i
			if i > 0 {
				p[1] ^= a >> (64 - i)
			}
		}
	}
	return p
}

// rawCRC is the CRC32C of p from 0, without inversions.
func rawCRC(p []byte) uint32 { return ^crc32.Update(^uint32(0), castagnoli, p) }
