// Package loopback picks loopback addresses for processes that must know
// each other's addresses before any of them starts: the members of a
// group, or a server and its console.
package loopback

import (
	"errors"
	"net"
)

// FreeAddrs returns n distinct loopback addresses (127.0.0.1:port) that
// were free a moment ago.
//
// NB: all n ports are held until the last is picked, or the kernel may
// hand out a port just closed again (CI once gave two members one port).
// They are free again when FreeAddrs returns, so another process may still
// take one before its owner binds it.
func FreeAddrs(n int) ([]string, error) {
	held := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("loopback: pick a free port"), err)
		}
		held = append(held, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}
