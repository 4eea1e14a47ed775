package loopback

import (
	"net"
	"testing"
)

// The addresses are distinct, and free once returned.
func TestFreeAddrs(t *testing.T) {
	addrs, err := FreeAddrs(16)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s given twice in %v", a, addrs)
		}
		seen[a] = true
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s is not free: %v", a, err)
		}
		l.Close()
	}
}
