// Package tlsconf builds the TLS settings of Strata's gRPC connections
// (docs/security.md): servers (the namespace service's members, workers)
// present a certificate and accept clients with or without one; members and
// workers also present theirs when they connect, and the calls only they
// make (Raft traffic between members, workers' heartbeats) are refused
// without a certificate signed by the cluster's CA. It also makes the
// self-signed CA and certificate of `strata server --dev`.
//
// It is not authentication of users: which user a client acts as is the
// namespace service's business, over the connection this package secures.
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Files names the PEM files of a process's TLS settings.
type Files struct {
	// Cert and Key are the process's certificate and key: a server's, and
	// the client certificate a member or worker presents when it connects.
	Cert, Key string
	// CA is the bundle of the cluster's certificate authority: clients
	// check servers with it, servers check client certificates with it.
	// Empty: the system's roots (clients), no client certificates (servers).
	CA string
}

// Server returns the settings of a server with f's certificate, which
// verifies the client certificates presented (signed by f.CA) and accepts
// clients without one (the calls that need one check it: MembersOnly).
func (f Files) Server() (*tls.Config, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("TLS needs --tls-cert and --tls-key (or --plaintext)")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, ClientAuth: tls.NoClientCert}
	if f.CA != "" {
		if c.ClientCAs, err = pool(f.CA); err != nil {
			return nil, err
		}
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c, nil
}

// Client returns the settings of a client that checks servers against
// f.CA (the system's roots if empty) and presents f's certificate, if
// any (members and workers do).
func (f Files) Client() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	if f.CA != "" {
		if c.RootCAs, err = pool(f.CA); err != nil {
			return nil, err
		}
	}
	if f.Cert != "" && f.Key != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

func pool(caFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("TLS CA: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS CA %s: no PEM certificate in it", caFile)
	}
	return p, nil
}

// Dial returns the dial option of a client with settings c; nil c dials in
// plaintext.
func Dial(c *tls.Config) grpc.DialOption {
	if c == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(c))
}

// ServerOptions returns the options of a server with settings c (none for
// nil: plaintext), refusing the methods whose full names start with one of
// membersOnly (as "/strata.v1.RaftService/") to clients without a
// verified certificate.
func ServerOptions(c *tls.Config, membersOnly ...string) []grpc.ServerOption {
	if c == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(c)),
		grpc.ChainUnaryInterceptor(MembersOnlyUnary(c, membersOnly...)),
		grpc.ChainStreamInterceptor(MembersOnlyStream(c, membersOnly...))}
}

// Creds returns the credentials option of a server with settings c (none
// for nil: plaintext), for a server that places the members-only checks in
// its own interceptor chain.
func Creds(c *tls.Config) []grpc.ServerOption {
	if c == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(c))}
}

// MembersOnlyUnary refuses the unary calls of the methods whose full names
// start with one of membersOnly to clients without a certificate the
// cluster's CA signed; with nil c (plaintext) it lets every call through.
func MembersOnlyUnary(c *tls.Config, membersOnly ...string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if c != nil && hasPrefix(info.FullMethod, membersOnly) {
			if err := CheckMember(ctx, info.FullMethod); err != nil {
				return nil, err
			}
		}
		return h(ctx, req)
	}
}

// MembersOnlyStream is MembersOnlyUnary for streams.
func MembersOnlyStream(c *tls.Config, membersOnly ...string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if c != nil && hasPrefix(info.FullMethod, membersOnly) {
			if err := CheckMember(ss.Context(), info.FullMethod); err != nil {
				return err
			}
		}
		return h(srv, ss)
	}
}

func hasPrefix(method string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// CheckMember refuses a call over TLS whose client presented no
// certificate that the server verified against the cluster's CA.
func CheckMember(ctx context.Context, method string) error {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s: no peer", method)
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return nil // a plaintext server: no certificates to check
	}
	if len(info.State.VerifiedChains) == 0 {
		return status.Errorf(codes.PermissionDenied,
			"%s is for the cluster's members and workers: connect with a certificate signed by the cluster's CA (--tls-cert, --tls-key)", method)
	}
	return nil
}
