package testhosts_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testhosts"
)

// The helper's modes: the test binary, started again on a host, as a
// small program (STRATA_TESTHOSTS_HELPER=mode, the address in
// STRATA_TESTHOSTS_ADDR).
func TestMain(m *testing.M) {
	switch os.Getenv("STRATA_TESTHOSTS_HELPER") {
	case "":
		os.Exit(m.Run())
	case "load":
		os.Exit(runLoad())
	case "hostname":
		h, err := os.Hostname()
		fmt.Println(h, err)
	case "dial":
		c, err := net.DialTimeout("tcp", os.Getenv("STRATA_TESTHOSTS_ADDR"), 500*time.Millisecond)
		switch {
		case err == nil:
			c.Close()
			fmt.Println("connected")
		case errors.Is(err, syscall.ENETUNREACH):
			fmt.Println("unreachable")
		default:
			fmt.Println("failed:", err)
		}
	case "listen":
		l, err := net.Listen("tcp", os.Getenv("STRATA_TESTHOSTS_ADDR"))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("listening")
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(1)
			}
			c.Close()
		}
	}
	os.Exit(0)
}

func helper(t *testing.T, h *testhosts.Host, mode, addr string) string {
	t.Helper()
	t.Setenv("STRATA_TESTHOSTS_HELPER", mode)
	t.Setenv("STRATA_TESTHOSTS_ADDR", addr)
	out, err := h.Run(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// listen starts a listener on h at port 9000 and returns its address once
// it listens.
func listen(t *testing.T, h *testhosts.Host) string {
	t.Helper()
	addr := h.Addr + ":9000"
	t.Setenv("STRATA_TESTHOSTS_HELPER", "listen")
	t.Setenv("STRATA_TESTHOSTS_ADDR", addr)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(os.Args[0], nil, w)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if line, _ := bufio.NewReader(r).ReadString('\n'); line != "listening\n" {
		t.Fatalf("listener on %s: %q", h.Name, line)
	}
	return addr
}

// Each host has its own host name and address; the hosts reach each other
// and the observer, and nothing outside the bridge.
func TestHosts(t *testing.T) {
	n := testhosts.New(t)
	a, b := n.Host("alpha"), n.Host("beta")
	for _, h := range []*testhosts.Host{a, b} {
		if got := helper(t, h, "hostname", ""); got != h.Name+" <nil>" {
			t.Errorf("host %s says its name is %q", h.Name, got)
		}
	}
	if a.Addr == b.Addr {
		t.Fatalf("two hosts at %s", a.Addr)
	}
	if got := helper(t, a, "dial", listen(t, b)); got != "connected" {
		t.Errorf("alpha to beta: %s", got)
	}
	l, err := net.Listen("tcp", n.Observer()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for c, err := l.Accept(); err == nil; c, err = l.Accept() {
			c.Close()
		}
	}()
	if got := helper(t, b, "dial", l.Addr().String()); got != "connected" {
		t.Errorf("beta to the observer: %s", got)
	}
	if got := helper(t, a, "dial", "198.51.100.1:80"); got != "unreachable" {
		t.Errorf("alpha to an address off the bridge: %s (want no route at all)", got)
	}
	if got := helper(t, a, "dial", "127.0.0.1:1"); !strings.Contains(got, "refused") {
		t.Errorf("alpha's own loopback: %s (want its own, with nothing listening)", got)
	}
}

// A cut link drops packets silently (a connection times out, it is not
// refused) between its two hosts only; healing restores it.
func TestCutAndHeal(t *testing.T) {
	n := testhosts.New(t)
	a, b, c := n.Host("a"), n.Host("b"), n.Host("c")
	addr := listen(t, b)
	n.Cut(a, b)
	if got := helper(t, a, "dial", addr); !strings.Contains(got, "timeout") {
		t.Errorf("a to b, cut: %s (want a timeout)", got)
	}
	if got := helper(t, c, "dial", addr); got != "connected" {
		t.Errorf("c to b, with a-b cut: %s", got)
	}
	n.Heal(a, b)
	if got := helper(t, a, "dial", addr); got != "connected" {
		t.Errorf("a to b, healed: %s", got)
	}
	n.Isolate(b)
	for _, h := range []*testhosts.Host{a, c} {
		if got := helper(t, h, "dial", addr); !strings.Contains(got, "timeout") {
			t.Errorf("%s to b, b isolated: %s (want a timeout)", h.Name, got)
		}
	}
	if n.Cuts() != 2 {
		t.Errorf("%d links cut, want 2", n.Cuts())
	}
	n.HealAll()
	if got := helper(t, c, "dial", addr); got != "connected" {
		t.Errorf("c to b, all healed: %s", got)
	}
}
