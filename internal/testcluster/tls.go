package testcluster

import (
	"crypto/tls"
	"testing"

	"github.com/stratafs/strata/internal/tlsconf"
)

// DevTLS makes a CA of the test's own and a certificate it signed for
// loopback (tlsconf.Dev, in a temporary directory), and returns the files
// and a server's configuration from them.
func DevTLS(t testing.TB) (tlsconf.Files, *tls.Config) {
	t.Helper()
	files, err := tlsconf.Dev(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	server, err := files.Server()
	if err != nil {
		t.Fatal(err)
	}
	return files, server
}
