package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// The member's memory is what its flags size, and nothing that grows with
// the namespace (docs/operations.md, "Sizing a member's memory"):
//
//	RSS ≈ --memory-limit (the Go heap: the hot cache, the Raft log's
//	      unapplied tail, calls in flight)
//	    + --block-cache (pebble's, outside the Go heap)
//	    + pebble's memtables (a few of 8 MiB each) and the index and
//	      filter blocks of open tables the block cache does not hold
//
// Their defaults are sized for the machine: a quarter of its memory (or of
// its cgroup's limit) for the Go heap, at most 4 GiB, and a sixteenth for
// each cache, at most 256 MiB.
const (
	maxDefaultMemoryLimit = 4 << 30
	maxDefaultCache       = 256 << 20
)

// machineMemory returns the bytes of memory this process may use: the
// machine's, or its cgroup's limit if lower; 0 if neither can be read.
func machineMemory() int64 {
	var total int64
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// sizedDefault is share of the machine's memory, at most most (most too
// if the machine's memory is unknown).
func sizedDefault(share, most int64) int64 {
	m := machineMemory()
	if m <= 0 {
		return most
	}
	return min(m/share, most)
}

// defaultMemoryLimit is --memory-limit's default.
func defaultMemoryLimit() int64 { return sizedDefault(4, maxDefaultMemoryLimit) }

// defaultCache is --block-cache's and --hot-cache's default.
func defaultCache() int64 { return sizedDefault(16, maxDefaultCache) }

// tuneGC makes the collector run less often in a server process: its heap
// is small next to the memory pebble and the caches hold outside it, and
// collection was a third of the metadata path's CPU. A soft limit of limit
// bytes (0: defaultMemoryLimit) keeps the heap bounded all the same. GOGC
// and GOMEMLIMIT in the environment win.
func tuneGC(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if limit <= 0 {
		limit = defaultMemoryLimit()
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
