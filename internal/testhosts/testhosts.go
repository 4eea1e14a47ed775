// Package testhosts makes a cluster of hosts on one machine for tests:
// each host a network namespace of its own, with its own address on a
// bridge and its own UTS host name, and the processes a test starts on it.
// A test cuts and heals the link between any two hosts and isolates a
// host (and pauses a process: procgroup.Process.Pause), while the rest go
// on: what a real network does to Strata (partitions, containers with
// their own host names) and one loopback interface cannot.
//
// Traffic stays between the hosts a test made: the bridge has no uplink, the
// hosts no default route, only the bridge's own /24. The test process
// itself is the bridge's first address (the observer: it starts the
// processes, asks the members who leads), and no link to it is ever cut.
// The addresses come from 198.18.0.0/15 (RFC 2544's range for testing
// network devices), a /24 per Net.
//
// What it is not: a way to add latency. This machine's kernel has no netem
// (tc qdisc netem), so a link is up or cut, nothing between; a paused
// process (SIGSTOP) stands in for a slow one.
//
// It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2 and
// util-linux (ip, nsenter, unshare), which scripts/deps/install.sh
// installs. It is test support only.
package testhosts

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// Net is a bridge and the hosts on it. Its methods may be called from any
// goroutine.
type Net struct {
	t      testing.TB
	id     string // unique on the machine while the Net lives: the test process's pid in hex, "g", a count
	bridge string
	subnet string // "198.18.N", the /24 without its last byte
	dir    string // the hosts' UTS namespaces are bind-mounted here
	mu     struct {
		sync.Mutex
		hosts []*Host
		cut   map[[2]string]bool // links cut, by host names in order
	}
}

// Host is one network namespace and UTS host name on a Net.
type Host struct {
	Name  string // its host name, as os.Hostname says inside it
	Addr  string // its IPv4 address on the bridge
	net   *Net
	index int
	netns string // /run/netns/<name>
	uts   string // the bind mount of its UTS namespace
	mac   string // its interface's hardware address
}

// runDir holds what the Nets of this machine bind-mount, a folder per test
// process (its pid) and in it one per Net.
const runDir = "/run/strata-testhosts"

// nets counts the Nets this process made, for their names.
var nets atomic.Int64

// New makes a bridge for the test, removed (with every host on it) at
// cleanup. It fails the test if the machine cannot make one.
func New(t testing.TB) *Net {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("testhosts: network namespaces need root (the tests run as root, in CI too)")
	}
	for _, tool := range []string{"ip", "nsenter", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("testhosts: %s is missing (scripts/deps/install.sh installs iproute2 and util-linux)", tool)
		}
	}
	removeStale()
	id := fmt.Sprintf("%xg%d", os.Getpid(), nets.Add(1))
	n := &Net{t: t, id: id, bridge: "sb" + id, dir: filepath.Join(runDir, strconv.Itoa(os.Getpid()), id)}
	n.mu.cut = map[[2]string]bool{}
	t.Cleanup(n.close)
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	subnet, err := freeSubnet()
	if err != nil {
		t.Fatal(err)
	}
	n.subnet = subnet
	n.must("ip", "link", "add", n.bridge, "type", "bridge")
	n.must("ip", "addr", "add", n.subnet+".1/24", "dev", n.bridge)
	n.must("ip", "link", "set", n.bridge, "up")
	return n
}

// Observer is the test process's address on the bridge.
func (n *Net) Observer() string { return n.subnet + ".1" }

// Host adds a host called name (its UTS host name too): a network
// namespace with loopback up and one interface on the bridge.
func (n *Net) Host(name string) *Host {
	n.t.Helper()
	n.mu.Lock()
	i := len(n.mu.hosts) + 2 // .1 is the observer
	n.mu.Unlock()
	if i > 250 {
		n.t.Fatal("testhosts: at most 249 hosts on a Net")
	}
	h := &Host{Name: name, Addr: fmt.Sprintf("%s.%d", n.subnet, i), net: n, index: i,
		netns: "strata-" + n.id + "-" + strconv.Itoa(i), uts: filepath.Join(n.dir, strconv.Itoa(i)+".uts")}
	outer, inner := fmt.Sprintf("s%sb%d", n.id, i), fmt.Sprintf("s%sh%d", n.id, i)
	n.must("ip", "netns", "add", h.netns)
	n.mu.Lock()
	n.mu.hosts = append(n.mu.hosts, h)
	n.mu.Unlock()
	n.must("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
	n.must("ip", "link", "set", inner, "netns", h.netns)
	n.must("ip", "link", "set", outer, "master", n.bridge, "up")
	n.must("ip", "-n", h.netns, "link", "set", "lo", "up")
	n.must("ip", "-n", h.netns, "link", "set", inner, "name", "eth0")
	n.must("ip", "-n", h.netns, "addr", "add", h.Addr+"/24", "dev", "eth0")
	n.must("ip", "-n", h.netns, "link", "set", "eth0", "up")
	h.mac = strings.TrimSpace(n.must("ip", "-n", h.netns, "-br", "link", "show", "eth0"))
	if f := strings.Fields(h.mac); len(f) >= 3 {
		h.mac = f[2]
	}
	if err := os.WriteFile(h.uts, nil, 0o600); err != nil {
		n.t.Fatal(err)
	}
	n.must("unshare", "--uts="+h.uts, "hostname", name)
	return h
}

// Hosts returns the hosts made so far, in order.
func (n *Net) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Host(nil), n.mu.hosts...)
}

// must runs a command and fails the test if it fails; it returns its
// output.
func (n *Net) must(name string, args ...string) string {
	n.t.Helper()
	out, err := run(name, args...)
	if err != nil {
		n.t.Fatal(err)
	}
	return out
}

func run(name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testhosts: %s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return out.String(), nil
}

// close removes the hosts (their interfaces go with their namespaces) and
// the bridge. Processes still running in a host keep its namespace alive
// but cut off: the tests' processes are killed by their own cleanups,
// which run first (registered later).
func (n *Net) close() {
	for _, h := range n.Hosts() {
		_ = syscall.Unmount(h.uts, syscall.MNT_DETACH)
		_, _ = run("ip", "netns", "del", h.netns)
	}
	_, _ = run("ip", "link", "del", n.bridge)
	_ = os.RemoveAll(n.dir)
}

// removeStale removes what Nets of test processes that died (killed before
// their cleanup) left: namespaces, bridges and mounts named by a pid that
// no longer runs.
func removeStale() {
	entries, _ := os.ReadDir(runDir)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || alive(pid) {
			continue
		}
		mounts, _ := filepath.Glob(filepath.Join(runDir, e.Name(), "*", "*.uts"))
		for _, m := range mounts {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
		ids, _ := os.ReadDir(filepath.Join(runDir, e.Name()))
		for _, id := range ids {
			nss, _ := filepath.Glob("/run/netns/strata-" + id.Name() + "-*")
			for _, ns := range nss {
				_, _ = run("ip", "netns", "del", filepath.Base(ns))
			}
			_, _ = run("ip", "link", "del", "sb"+id.Name())
		}
		_ = os.RemoveAll(filepath.Join(runDir, e.Name()))
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// freeSubnet returns a /24 of 198.18.0.0/15 that no interface of this
// namespace has an address in.
//
// NB: two test processes that pick at the same moment may pick the same;
// the second's `ip addr add` then still succeeds, but its routes clash, so
// the choice starts at the pid's own /24 to make that unlikely.
func freeSubnet() (string, error) {
	used := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if v4 := ipn.IP.To4(); v4 != nil {
				used[fmt.Sprintf("%d.%d.%d", v4[0], v4[1], v4[2])] = true
			}
		}
	}
	start := os.Getpid() % 512
	for k := range 512 {
		j := (start + k) % 512
		s := fmt.Sprintf("198.%d.%d", 18+j/256, j%256)
		if !used[s] {
			return s, nil
		}
	}
	return "", errors.New("testhosts: every /24 of 198.18.0.0/15 is in use")
}
