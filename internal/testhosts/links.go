package testhosts

import "sort"

// A cut link drops every packet between its two hosts, silently, both
// ways, as a partition does: connections already open see nothing until
// their timeouts and retransmissions give up, and new ones time out. Each
// side's neighbour entry for the other is pinned to a hardware address
// nobody has (the bridge floods the frames, and every host drops them),
// which needs nothing from the kernel beyond a bridge; healing removes the
// entries, and the hosts find each other again by ARP.
const nowhere = "02:00:00:00:00:01"

// Cut cuts the link between hosts a and b (both ways).
func (n *Net) Cut(a, b *Host) {
	n.t.Helper()
	n.must("ip", "-n", a.netns, "neigh", "replace", b.Addr, "lladdr", nowhere, "dev", "eth0", "nud", "permanent")
	n.must("ip", "-n", b.netns, "neigh", "replace", a.Addr, "lladdr", nowhere, "dev", "eth0", "nud", "permanent")
	n.mu.Lock()
	n.mu.cut[pair(a, b)] = true
	n.mu.Unlock()
}

// Heal restores the link between hosts a and b.
func (n *Net) Heal(a, b *Host) {
	n.t.Helper()
	n.must("ip", "-n", a.netns, "neigh", "replace", b.Addr, "lladdr", b.mac, "dev", "eth0", "nud", "reachable")
	n.must("ip", "-n", b.netns, "neigh", "replace", a.Addr, "lladdr", a.mac, "dev", "eth0", "nud", "reachable")
	n.mu.Lock()
	delete(n.mu.cut, pair(a, b))
	n.mu.Unlock()
}

// Isolate cuts every link of h to the other hosts (not to the observer).
func (n *Net) Isolate(h *Host) {
	n.t.Helper()
	for _, o := range n.Hosts() {
		if o != h {
			n.Cut(h, o)
		}
	}
}

// Partition cuts every link between a host of one side and a host of the
// other.
func (n *Net) Partition(side, other []*Host) {
	n.t.Helper()
	for _, a := range side {
		for _, b := range other {
			n.Cut(a, b)
		}
	}
}

// HealAll restores every link cut.
func (n *Net) HealAll() {
	n.t.Helper()
	byName := map[string]*Host{}
	for _, h := range n.Hosts() {
		byName[h.netns] = h
	}
	n.mu.Lock()
	var cut [][2]string
	for p := range n.mu.cut {
		cut = append(cut, p)
	}
	n.mu.Unlock()
	sort.Slice(cut, func(i, j int) bool { return cut[i][0]+cut[i][1] < cut[j][0]+cut[j][1] })
	for _, p := range cut {
		n.Heal(byName[p[0]], byName[p[1]])
	}
}

// Cuts returns how many links are cut.
func (n *Net) Cuts() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.mu.cut)
}

func pair(a, b *Host) [2]string {
	if a.netns > b.netns {
		a, b = b, a
	}
	return [2]string{a.netns, b.netns}
}
