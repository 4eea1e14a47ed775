// Package blocks names file blocks and places them on workers. It fixes two
// formats that outlive any process, so it is the one place to read them:
//
//   - In the bucket, block b of file (inode) i is the object
//     "blocks/<i:016x>/<b:016x>" under the namespace's store URI. Block ids
//     are random and unique within their file; a file's blocks share a
//     prefix, so the blocks an abandoned writer left behind are found by
//     listing it.
//   - In a worker's cache, the same block is the key "<i:016x>-<b:016x>";
//     inode ids are unique across namespaces, so keys are too.
//   - In cache mode a file is one object at the key of its path, which its
//     readers see as blocks: block i is the range [i*size, (i+1)*size) of
//     the object, with the id ObjectBlockID(key, version, i), so that
//     another version of the object is other blocks, never a stale hit.
//
// Placement is rendezvous hashing: each (worker, block) pair gets a score and
// a block's home is the live worker with the highest, so adding or losing a
// worker moves only the blocks it wins or held. It does no I/O.
package blocks

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Bounds of a file's block size: a worker holds a block in memory while it
// uploads it, and tiny blocks multiply objects and requests. The minimum is
// HDFS's checksum chunk; Hadoop's contract tests use blocks of 1 KiB.
const (
	MinSize = 512
	MaxSize = 1 << 30
)

// CheckSize returns an error unless size is a block size a file may have:
// the one check, made by the namespace service when a file is created (and
// when the service's default is configured) and by a worker when it cuts a
// write into blocks.
func CheckSize(size uint64) error {
	if size < MinSize || size > MaxSize {
		return fmt.Errorf("block size %d is outside [%d, %d]", size, MinSize, MaxSize)
	}
	return nil
}

// Prefix is the prefix of every block object's key.
const Prefix = "blocks/"

// ObjectKey is the bucket object holding block of inode.
func ObjectKey(inode, block uint64) string {
	return fmt.Sprintf("blocks/%016x/%016x", inode, block)
}

// ObjectPrefix is the prefix of every object of inode's blocks.
func ObjectPrefix(inode uint64) string { return fmt.Sprintf("blocks/%016x/", inode) }

// ParseObjectKey returns the block id of an object key under ObjectPrefix.
func ParseObjectKey(inode uint64, key string) (uint64, bool) {
	var got, block uint64
	n, err := fmt.Sscanf(key, "blocks/%016x/%016x", &got, &block)
	return block, err == nil && n == 2 && got == inode && key == ObjectKey(inode, block)
}

// CacheKey is the cache key of block of inode.
func CacheKey(inode, block uint64) string { return fmt.Sprintf("%016x-%016x", inode, block) }

// ObjectBlockID is the id of block index of a cache-mode file: the range
// of object key, version etag, that the block covers. It is never 0.
func ObjectBlockID(key, etag string, index uint64) uint64 {
	d := xxhash.New()
	_, _ = d.WriteString(key)
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(etag)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	_, _ = d.Write(b[:])
	return d.Sum64() | 1
}

// NewID returns a random, non-zero block id.
func NewID() uint64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// Rank returns the indexes of workers in order of preference for block of
// inode: the home first, then the fallbacks.
func Rank(workers []string, inode, block uint64) []int {
	var key [16]byte
	binary.BigEndian.PutUint64(key[:8], inode)
	binary.BigEndian.PutUint64(key[8:], block)
	scores := make([]uint64, len(workers))
	order := make([]int, len(workers))
	for i, w := range workers {
		d := xxhash.New()
		_, _ = d.WriteString(w)
		_, _ = d.Write(key[:])
		scores[i], order[i] = d.Sum64(), i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	return order
}
