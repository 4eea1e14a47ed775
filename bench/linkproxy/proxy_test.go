package linkproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/bench/linkproxy"
)

// target is a TCP server on loopback that reads each connection to its end,
// then answers with reply(what it read) and closes.
func target(t *testing.T, reply func([]byte) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				got, err := io.ReadAll(c)
				if err != nil {
					return
				}
				_, _ = c.Write(reply(got))
			})
		}
	})
	return ln.Addr().String()
}

func start(t *testing.T, to string, bw float64) *linkproxy.Proxy {
	t.Helper()
	p, err := linkproxy.Listen("127.0.0.1:0", to, bw)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve() }()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p
}

// exchange sends req through the proxy, half-closes, and returns the answer.
func exchange(t *testing.T, ctx context.Context, addr string, req []byte) []byte {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func random(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Bytes cross intact both ways, an answer still comes after the client
// half-closed, and each direction is counted, over several connections at
// once and under a limit.
func TestForwardsAndCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reverse := func(b []byte) []byte {
		out := append([]byte("re:"), b...)
		for i, j := 3, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	p := start(t, target(t, reverse), 64<<20)
	const conns, size = 4, 300 << 10
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			req := random(size, uint64(i))
			if got, want := exchange(t, ctx, p.Addr(), req), reverse(req); !bytes.Equal(got, want) {
				t.Errorf("connection %d: got %d bytes, want %d (content differs: %v)", i, len(got), len(want), len(got) == len(want))
			}
		})
	}
	wg.Wait()
	st := p.Stats()
	if st.Up != conns*size || st.Down != conns*(size+3) || st.Conns != conns || st.Bandwidth != 64<<20 {
		t.Errorf("stats %+v, want up %d, down %d, %d connections, bandwidth %d", st, conns*size, conns*(size+3), conns, 64<<20)
	}
}

// A target that cannot be reached closes the client's connection.
func TestDeadTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	p := start(t, dead, 0)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(25 * time.Second))
	if got, err := io.ReadAll(c); len(got) != 0 || (err != nil && !strings.Contains(err.Error(), "reset")) {
		t.Errorf("got %q, %v from a dead target; want the connection closed", got, err)
	}
}

// Close ends the connections still open (here one whose target never
// answers) and Serve returns nil.
func TestCloseEndsOpenConnections(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := start(t, target(t, func(b []byte) []byte { return b }), 0)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(25 * time.Second))
	if _, err := c.Write([]byte("never ended")); err != nil {
		t.Fatal(err)
	}
	for p.Stats().Open != 1 { // the handler has dialled the target
		if ctx.Err() != nil {
			t.Fatal("the connection was never opened")
		}
		time.Sleep(time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading a connection the proxy closed: %v", err)
	}
	if st := p.Stats(); st.Open != 0 {
		t.Errorf("%d connections open after Close", st.Open)
	}
}

// The HTTP control reports the stats and changes the limit; a bad value is
// refused and changes nothing.
func TestHandler(t *testing.T) {
	p := start(t, target(t, func(b []byte) []byte { return b }), 1e6)
	srv := httptest.NewServer(linkproxy.Handler(p))
	defer srv.Close()
	do := func(method, path string) (int, linkproxy.Stats) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st linkproxy.Stats
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, st
	}
	if code, st := do("GET", "/stats"); code != 200 || st.Bandwidth != 1e6 {
		t.Errorf("GET /stats: %d %+v", code, st)
	}
	if code, st := do("PUT", "/bandwidth?bytes-per-sec=2.5e7"); code != 200 || st.Bandwidth != 2.5e7 {
		t.Errorf("PUT /bandwidth: %d %+v", code, st)
	}
	for _, bad := range []string{"", "-1", "fast", "NaN", "Inf"} {
		if code, _ := do("PUT", "/bandwidth?bytes-per-sec="+bad); code != http.StatusBadRequest {
			t.Errorf("PUT /bandwidth?bytes-per-sec=%s: %d, want 400", bad, code)
		}
	}
	if p.Stats().Bandwidth != 2.5e7 {
		t.Errorf("a refused value changed the limit: %+v", p.Stats())
	}
	if code, _ := do("POST", "/stats"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /stats: %d, want 405", code)
	}
}
