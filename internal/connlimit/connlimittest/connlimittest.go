// Package connlimittest is what the tests of servers behind a
// connlimit.Listener share: connections that connect, say what a client
// says first and then nothing, from a loopback address of the test's
// choice, and the wait for the server to close one. It is for tests only.
package connlimittest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// DialFrom connects to addr over TCP from the loopback address ip (one of
// 127.0.0.0/8), so that a test's connections count against an address of
// their own.
func DialFrom(ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return d.Dial("tcp", addr)
}

// SilentHTTP2 speaks on c as a gRPC client does until the server's
// SETTINGS arrived (a TLS handshake with cfg, offering h2, unless cfg is
// nil; the client's preface and SETTINGS), and then says nothing. It
// returns the connection to hold (TLS's, over c), or closes c and returns
// the error of a server that closed it at once.
func SilentHTTP2(c net.Conn, cfg *tls.Config) (net.Conn, error) {
	conn := c
	if cfg != nil {
		cfg = cfg.Clone()
		cfg.NextProtos = []string{"h2"}
		conn = tls.Client(c, cfg)
	}
	err := conn.SetDeadline(time.Now().Add(10 * time.Second))
	if tc, ok := conn.(*tls.Conn); ok && err == nil {
		err = tc.Handshake()
	}
	if err == nil {
		_, err = io.WriteString(conn, http2.ClientPreface)
	}
	fr := http2.NewFramer(conn, conn)
	if err == nil {
		err = fr.WriteSettings()
	}
	var f http2.Frame
	if err == nil {
		f, err = fr.ReadFrame()
	}
	if sf, ok := f.(*http2.SettingsFrame); err == nil && (!ok || sf.IsAck()) {
		err = fmt.Errorf("the server's first frame is %v, not its SETTINGS", f)
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return conn, nil
}

// ClosedWithin reports whether the server closes c within limit: reading
// c, whatever the server sends, meets its end (or a reset) before then. It
// waits no longer.
func ClosedWithin(t testing.TB, c net.Conn, limit time.Duration) bool {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(limit)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}
