package client

import (
	"bytes"
	"testing"
)

// Request ids are unique, and a process's sort in the order it made them
// (the service's keys of their answers then land side by side).
func TestRequestIDsAreUniqueAndSortInOrder(t *testing.T) {
	prev := newRequestID()
	seen := map[string]bool{string(prev): true}
	for range 10000 {
		id := newRequestID()
		if len(id) != 16 || seen[string(id)] {
			t.Fatalf("request id %x: %d bytes, seen before %v", id, len(id), seen[string(id)])
		}
		if bytes.Compare(prev, id) >= 0 {
			t.Fatalf("request id %x made after %x sorts before it", id, prev)
		}
		seen[string(id)] = true
		prev = id
	}
}
