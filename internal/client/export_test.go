package client

import "time"

// SetLeaseTTL makes short-circuit leases last d until the test ends.
func SetLeaseTTL(t interface{ Cleanup(func()) }, d time.Duration) {
	old := leaseTTL
	leaseTTL = d
	t.Cleanup(func() { leaseTTL = old })
}

// Leases returns how many short-circuit leases c holds.
func Leases(c *Client) int {
	c.workers.mu.Lock()
	defer c.workers.mu.Unlock()
	n := 0
	for _, p := range c.workers.mu.sc {
		p.leases.mu.Lock()
		n += len(p.leases.mu.m)
		p.leases.mu.Unlock()
	}
	return n
}

// BatchesSent returns how many Batch RPCs c made.
func BatchesSent(c *Client) int64 { return c.batches.sent() }
