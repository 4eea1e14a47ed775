package metaserver_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/connlimit/connlimittest"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/tlsconf"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The tests of the bounds of the service's connections (connlimit,
// docs/security.md "Connections"): what a client that connects and says
// nothing may hold of the service.

// tlsService is a member serving TLS with a test CA's certificate, its
// connections bounded by limits, and the TLS settings of a client with
// that CA.
func tlsService(t *testing.T, limits connlimit.Config) (*testcluster.InProcess, *tls.Config) {
	t.Helper()
	files, server := testcluster.DevTLS(t)
	peer, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	svc := testcluster.StartInProcess(t, func(c *metaserver.Config) { c.TLS, c.PeerTLS, c.Conns = server, peer, limits })
	ca, err := tlsconf.Files{CA: files.CA}.Client()
	if err != nil {
		t.Fatal(err)
	}
	return svc, ca
}

// tlsClient is a client of svc over TLS with the superuser's token.
func tlsClient(t *testing.T, svc *testcluster.InProcess, ca *tls.Config) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Meta: svc.Addr, TLS: ca, Token: testcluster.AdminToken(t, svc.Addr)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// silentGRPC connects to addr from ip as a gRPC client does, over TLS with
// ca and HTTP/2, and says nothing more (connlimittest.SilentHTTP2).
func silentGRPC(ip, addr string, ca *tls.Config) (net.Conn, error) {
	c, err := connlimittest.DialFrom(ip, addr)
	if err != nil {
		return nil, err
	}
	return connlimittest.SilentHTTP2(c, withServerName(ca))
}

// silentCallWire connects to addr from ip as a callwire client does, over
// TLS with ca, says hello with token, and says nothing more.
func silentCallWire(ip, addr string, ca *tls.Config, token string) (net.Conn, error) {
	c, err := connlimittest.DialFrom(ip, addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c, withServerName(ca))
	_, err = io.WriteString(c, callwire.PrefaceTLS)
	if err == nil {
		err = tc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	if err == nil {
		err = tc.Handshake()
	}
	if err == nil {
		_, err = tc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...))
	}
	if err == nil {
		err = tc.SetDeadline(time.Time{})
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// withServerName is ca for a service on 127.0.0.1.
func withServerName(ca *tls.Config) *tls.Config {
	cfg := ca.Clone()
	cfg.ServerName = "127.0.0.1"
	return cfg
}

// A connection that completes TLS and HTTP/2 and makes no call, or
// completes callwire's hello with a token the service refuses, is closed at
// the first-call deadline; a client that made its calls keeps its
// connection.
func TestSilentConnectionsAreClosedAtTheFirstCallDeadline(t *testing.T) {
	const deadline = 500 * time.Millisecond
	svc, ca := tlsService(t, connlimit.Config{FirstCall: deadline})
	ctx := context.Background()
	c := tlsClient(t, svc, ca)
	if _, err := c.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	refused, err := callwire.Dial(ctx, svc.Addr, withServerName(ca), "st1.forged.token")
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	err = refused.Invoke(ctx, "/strata.v1.MetaService/WhoAmI", &pb.WhoAmIRequest{}, &pb.WhoAmIResponse{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call with a forged token: %v, want UNAUTHENTICATED", err)
	}
	start := time.Now()
	for _, silent := range []struct {
		name string
		open func() (net.Conn, error)
	}{
		{"gRPC", func() (net.Conn, error) { return silentGRPC("127.0.0.1", svc.Addr, ca) }},
		{"callwire", func() (net.Conn, error) { return silentCallWire("127.0.0.1", svc.Addr, ca, "") }},
	} {
		name := silent.name
		conn, err := silent.open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer conn.Close()
		if !connlimittest.ClosedWithin(t, conn, 10*time.Second) {
			t.Fatalf("a silent %s connection is still open after 10 s (the deadline is %v)", name, deadline)
		}
	}
	if took := time.Since(start); took < deadline/2 {
		t.Errorf("the silent connections were closed after %v, before the deadline of %v", took, deadline)
	}
	// The deadlines of the connections opened before the silent ones
	// passed too.
	err = refused.Invoke(ctx, "/strata.v1.MetaService/WhoAmI", &pb.WhoAmIRequest{}, &pb.WhoAmIResponse{})
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a connection whose calls were all refused: %v, want it closed (UNAVAILABLE)", err)
	}
	authenticated := svc.Conns.Stats().Authenticated
	if _, err := c.Stat(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if st := svc.Conns.Stats(); st.Authenticated != authenticated || authenticated == 0 {
		t.Errorf("the client's connection was replaced or closed: %d authenticated connections before its call, %+v after",
			authenticated, st)
	}
}

// 2,000 connections that complete TLS and HTTP/2 and say nothing more hold
// at most the per-address cap of connections at once (the rest are
// refused), and leave no descriptor nor memory behind once the deadline
// passed, while a client is served meanwhile.
func TestTwoThousandSilentConnections(t *testing.T) {
	const deadline, perAddr, n = 2 * time.Second, 100, 2000
	svc, ca := tlsService(t, connlimit.Config{FirstCall: deadline, MaxPerAddr: perAddr})
	ctx := context.Background()
	c := tlsClient(t, svc, ca) // from 127.0.0.1; the silent ones from 127.0.0.2
	if _, err := c.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	fds, heap := openFDs(t), heapInUse()

	var maxOpen atomic.Int64
	stop, served := make(chan struct{}), make(chan error, 1)
	go func() {
		calls, tick := 0, time.NewTicker(20*time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				if calls == 0 {
					served <- errors.New("no call made")
				}
				served <- nil
				return
			case <-tick.C:
			}
			if _, err := c.Stat(ctx, "/d"); err != nil {
				served <- fmt.Errorf("call %d: %w", calls, err)
				return
			}
			calls++
			if open := int64(svc.Conns.Stats().Open); open > maxOpen.Load() {
				maxOpen.Store(open)
			}
		}
	}()

	var held, refused atomic.Int64
	var stillOpen atomic.Int64
	var wg sync.WaitGroup
	dialing := make(chan struct{}, 32)
	for range n {
		wg.Add(1)
		dialing <- struct{}{}
		go func() {
			defer wg.Done()
			conn, err := silentGRPC("127.0.0.2", svc.Addr, ca)
			<-dialing
			if err != nil {
				refused.Add(1)
				return
			}
			defer conn.Close()
			held.Add(1)
			if !connlimittest.ClosedWithin(t, conn, 30*time.Second) {
				stillOpen.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-served; err != nil {
		t.Errorf("the client was not served meanwhile: %v", err)
	}
	if k := stillOpen.Load(); k > 0 {
		t.Fatalf("%d of %d silent connections are still open 30 s after they connected (the deadline is %v)", k, held.Load(), deadline)
	}
	st := svc.Conns.Stats()
	t.Logf("%d silent connections held until the deadline, %d refused; the most open at once: %d; %+v",
		held.Load(), refused.Load(), maxOpen.Load(), st)
	if maxOpen.Load() > perAddr+4 {
		t.Errorf("%d connections open at once, more than the cap of %d from one address and the client's", maxOpen.Load(), perAddr)
	}
	// NB: a dialer whose handshake outlasted the deadline (a loaded
	// machine) sees an error, and the service counts that connection
	// expired, not refused.
	if st.Refused+st.Expired < n || st.Refused > uint64(refused.Load()) || st.Expired < uint64(held.Load()) {
		t.Errorf("stats %+v: want each of the %d silent connections refused or expired, at most the %d the dialers "+
			"saw refused, and at least the %d they held expired", st, n, refused.Load(), held.Load())
	}
	if st.Open > 4 {
		t.Errorf("%d connections still open, want the client's only", st.Open)
	}
	if now := openFDs(t); now > fds+8 {
		t.Errorf("%d descriptors open, %d before the silent connections", now, fds)
	}
	if now := heapInUse(); now > heap+32<<20 {
		t.Errorf("%d MiB of heap in use, %d MiB before the silent connections", now>>20, heap>>20)
	}
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// heapInUse is the bytes of heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// The connection from one address over its cap is closed at once, gRPC's
// or callwire's, while the others from it stay and clients from other
// addresses are served.
func TestTheServiceRefusesConnectionsOverThePerAddressCap(t *testing.T) {
	const perAddr = 3
	svc, ca := tlsService(t, connlimit.Config{MaxPerAddr: perAddr, FirstCall: time.Hour})
	ctx := context.Background()
	c := tlsClient(t, svc, ca)
	var held []net.Conn
	for i := range perAddr {
		conn, err := silentGRPC("127.0.0.2", svc.Addr, ca)
		if err != nil {
			t.Fatalf("connection %d of %d from 127.0.0.2: %v", i+1, perAddr, err)
		}
		defer conn.Close()
		held = append(held, conn)
	}
	if conn, err := silentGRPC("127.0.0.2", svc.Addr, ca); err == nil {
		conn.Close()
		t.Fatalf("connection %d from 127.0.0.2 was served, over the cap of %d", perAddr+1, perAddr)
	}
	conn, err := connlimittest.DialFrom("127.0.0.2", svc.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, callwire.PrefaceTLS); err != nil {
		t.Fatal(err)
	}
	if !connlimittest.ClosedWithin(t, conn, 10*time.Second) {
		t.Fatalf("a callwire connection from 127.0.0.2 over the cap is not closed")
	}
	if _, err := c.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatalf("a client from 127.0.0.1: %v", err)
	}
	if st := svc.Conns.Stats(); st.Refused != 2 {
		t.Errorf("stats %+v, want 2 refused", st)
	}
	for i, h := range held {
		if connlimittest.ClosedWithin(t, h, 100*time.Millisecond) {
			t.Errorf("connection %d from 127.0.0.2, within the cap, was closed", i+1)
		}
	}
}

// The members' Raft streams and the workers' heartbeats are authenticated
// calls: their connections outlast the first-call deadline.
func TestMembersAndWorkersOutlastTheFirstCallDeadline(t *testing.T) {
	members := testcluster.StartInProcessGroup(t, 3, func(_ int, cfg *metaserver.Config) {
		cfg.Conns.FirstCall = 300 * time.Millisecond
	})
	meta := ""
	for i, m := range members {
		if i > 0 {
			meta += ","
		}
		meta += m.Addr
	}
	testcluster.ServeWorker(t, worker.Config{StateDir: t.TempDir(), Meta: meta,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 16 << 20}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Once every connection that makes no call (the clients' idle gRPC
	// ones) was closed, each member holds a Raft connection of another
	// member and the worker's, all authenticated.
	for i, m := range members {
		for st := m.Conns.Stats(); st.Open != st.Authenticated || st.Authenticated < 2; st = m.Conns.Stats() {
			if ctx.Err() != nil {
				t.Fatalf("member %d: %+v: connections not authenticated", i+1, st)
			}
			time.Sleep(10 * time.Millisecond) // a poll: the members' and the worker's calls run in their goroutines
		}
	}
	c := testcluster.Client(t, meta, "")
	if _, err := c.Mkdirs(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
}
