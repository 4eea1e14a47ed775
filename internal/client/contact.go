package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

// ParseMembers splits list, the namespace service's address or its
// members' addresses, comma-separated, each HOST:PORT. A malformed one is
// an fserr.ErrInvalidArgument that says what is wrong, before anything is
// dialled.
func ParseMembers(list string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if err := checkAddress(a); err != nil {
			return nil, fserr.Errorf(fserr.ErrInvalidArgument, "namespace service address %q: %v", a, err)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "no namespace service address (set --meta or STRATA_META)")
	}
	return addrs, nil
}

// checkAddress checks that a is HOST:PORT, PORT a number from 1 to 65535
// (an empty HOST is this host, as for net.Dial).
func checkAddress(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err + " (want HOST:PORT)")
		}
		return err
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q is not a host name", host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// Connect waits until some member of the namespace service accepts a
// connection, for at most Config.ConnectTimeout; once one did, it returns
// at once. Its error names each address and why it could not be reached
// ("cannot reach the namespace service at 127.0.0.1:1: connection
// refused"), and calls made within ConnectTimeout of it fail at once with
// it. Every call makes contact first; Connect lets a program fail before it
// starts on its work.
func (c *Client) Connect(ctx context.Context) error { return c.members.contact(ctx) }

// contact is Connect.
func (m *members) contact(ctx context.Context) error {
	if m.reached.Load() {
		return nil
	}
	if err := m.recentFailure(); err != nil {
		return err
	}
	err := m.waitForOne(ctx)
	if err != nil && ctx.Err() == nil {
		m.mu.Lock()
		m.unreached, m.unreachedAt = err, time.Now()
		m.mu.Unlock()
	}
	return err
}

// recentFailure is the error of a contact that failed within the last
// connectTimeout, or nil.
func (m *members) recentFailure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unreached != nil && time.Since(m.unreachedAt) < m.connectTimeout {
		return m.unreached
	}
	return nil
}

// waitForOne waits up to connectTimeout for a member to accept a
// connection.
func (m *members) waitForOne(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, m.connectTimeout)
	defer cancel()
	ready := make(chan struct{}, len(m.addrs))
	var wg sync.WaitGroup
	for _, a := range m.addrs {
		conn, err := m.conn(a)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if waitReady(cctx, conn) {
				ready <- struct{}{}
			}
		}()
	}
	select {
	case <-ready:
		m.reached.Store(true)
	case <-cctx.Done():
	}
	cancel()
	wg.Wait()
	if len(ready) > 0 {
		m.reached.Store(true)
	}
	switch {
	case m.reached.Load():
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return m.unreachable(ctx)
}

// waitReady reports whether conn connects to its member before ctx ends.
// gRPC keeps trying meanwhile, with its backoff, so that a member that is
// starting is found.
func waitReady(ctx context.Context, conn *grpc.ClientConn) bool {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return true
		}
		if !conn.WaitForStateChange(ctx, s) {
			return false
		}
	}
}

// unreachable is the error of a client that reached no member: each
// address and why, in one line.
func (m *members) unreachable(ctx context.Context) error {
	causes := make([]string, len(m.addrs))
	var wg sync.WaitGroup
	for i, a := range m.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			causes[i] = diagnose(ctx, a, m.connectTimeout, m.tls)
		}()
	}
	wg.Wait()
	msg := "cannot reach the namespace service at " + m.addrs[0] + ": " + causes[0]
	if len(m.addrs) > 1 {
		for i, a := range m.addrs {
			causes[i] = a + " (" + causes[i] + ")"
		}
		msg = "cannot reach the namespace service at any of its members: " + strings.Join(causes, ", ")
	}
	return &rpcerr.TransportError{Code: codes.Unavailable, Msg: msg}
}

// diagnoseTimeout bounds the dial that finds why an address could not be
// reached, after the wait for it.
const diagnoseTimeout = 500 * time.Millisecond

// diagnose says in a few words why addr accepts no gRPC connection: gRPC
// keeps its dialling errors to itself (a name that does not resolve is only
// "produced zero addresses"), so one plain dial finds the cause, and a TLS
// handshake with tc (or any, for a plaintext client) one of TLS.
func diagnose(ctx context.Context, addr string, waited time.Duration, tc *tls.Config) string {
	d := net.Dialer{Timeout: diagnoseTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		if why := diagnoseTLS(ctx, addr, tc); why != "" {
			return why
		}
		return fmt.Sprintf("it accepts connections but did not answer as a Strata service within %v", waited)
	}
	var dnsErr *net.DNSError
	var errno syscall.Errno
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr):
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %v", waited)
	}
	return err.Error()
}

// diagnoseTLS says why a TLS handshake with tc fails at addr, or, for a
// plaintext client (nil tc), that addr speaks TLS; "" if neither.
func diagnoseTLS(ctx context.Context, addr string, tc *tls.Config) string {
	probe := tc
	if probe == nil {
		probe = &tls.Config{InsecureSkipVerify: true} // only to tell whether it speaks TLS
	} else {
		probe = tc.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil && probe.ServerName == "" {
			probe.ServerName = host
		}
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: diagnoseTimeout}, Config: probe}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		if tc == nil {
			return "it speaks TLS and this client connects in plaintext: leave out --plaintext and $STRATA_PLAINTEXT, " +
				"and give the cluster's CA with --tls-ca or $STRATA_TLS_CA (the dev server's is DATA-DIR/tls/ca.pem)"
		}
		return ""
	}
	if tc == nil {
		return ""
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return "its TLS certificate is not signed by a CA this client trusts: give the cluster's CA with --tls-ca or " +
			"$STRATA_TLS_CA (the dev server's is DATA-DIR/tls/ca.pem)"
	case errors.As(err, &host):
		return "its TLS certificate is not for this address: " + host.Error()
	case errors.As(err, &rec):
		return "it does not speak TLS (a server started with --plaintext): connect with --plaintext or STRATA_PLAINTEXT=1"
	}
	return "TLS handshake failed: " + err.Error()
}
