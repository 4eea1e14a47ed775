package tlsconf

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"testing"
)

// The dev certificate names every address of this host a client may dial,
// so that a dev server listening on all of them (--listen 0.0.0.0:PORT) is
// reached over TLS at any of them, loopback or not.
func TestDevCertificateNamesTheHostsAddresses(t *testing.T) {
	f, err := Dev(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := pool(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"localhost", "127.0.0.1", "::1"}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			want = append(want, n.IP.String())
		}
	}
	for _, name := range want {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the dev certificate for %s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "0.0.0.0", Roots: roots}); err == nil {
		t.Error("the dev certificate names 0.0.0.0")
	}
}
