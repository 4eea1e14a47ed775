package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/tlsconf"
)

// `strata admin cert create DIR` makes a CA and a certificate a server can
// serve with and a client check, its key readable by its owner only, and
// keeps them when run again.
func TestCertCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	strata(t, 30*time.Second, nil, nil, "admin", "cert", "create", dir).expect(t, 0, "")
	f := tlsconf.Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	if _, err := f.Server(); err != nil {
		t.Fatalf("serving with what it made: %v", err)
	}
	if _, err := f.Client(); err != nil {
		t.Fatalf("a client of its CA: %v", err)
	}
	if st, err := os.Stat(f.Key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key: %v, %v", st.Mode(), err)
	}
	before, _ := os.ReadFile(f.Cert)
	strata(t, 30*time.Second, nil, nil, "admin", "cert", "create", dir).expect(t, 0, "")
	if after, _ := os.ReadFile(f.Cert); !bytes.Equal(before, after) {
		t.Fatal("a second run replaced the certificate")
	}
}
