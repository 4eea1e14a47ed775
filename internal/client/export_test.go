package client

import "time"

// SetLeaseTTL makes short-circuit leases last d until the test ends.
func SetLeaseTTL(t interface{ Cleanup(func()) }, d time.Duration) {
	old := leaseTTL
	leaseTTL = d
	t.Cleanup(func() { leaseTTL = old })
}

// SetLinkCheckEvery makes short-circuit leases look at their file every d
// (0: on every read) until the test ends.
func SetLinkCheckEvery(t interface{ Cleanup(func()) }, d time.Duration) {
	old := linkCheckEvery
	linkCheckEvery = d
	t.Cleanup(func() { linkCheckEvery = old })
}

// Leases returns how many short-circuit leases c holds.
func Leases(c *Client) int {
	n, _ := countLeases(c)
	return n
}

// MappedLeases returns how many of c's short-circuit leases read by
// mapping their file.
func MappedLeases(c *Client) int {
	_, mapped := countLeases(c)
	return mapped
}

func countLeases(c *Client) (n, mapped int) {
	c.workers.mu.Lock()
	defer c.workers.mu.Unlock()
	for _, p := range c.workers.mu.sc {
		p.leases.mu.Lock()
		for _, l := range p.leases.mu.m {
			n++
			if l.m != nil {
				mapped++
			}
		}
		p.leases.mu.Unlock()
	}
	return n, mapped
}

// BatchesSent returns how many Batch RPCs c made.
func BatchesSent(c *Client) int64 { return c.batches.sent() }

// TailStart returns where r's blocks end: past it, r reads the flushed
// tail from the service.
func TailStart(r *Reader) int64 { return r.tailStart }
