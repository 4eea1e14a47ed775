package testcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAdminTokenOfANewProcessOnAnOldAddress: a process serving at an
// address where an earlier test's service served is known by its own
// token, not the earlier one's.
func TestAdminTokenOfANewProcessOnAnOldAddress(t *testing.T) {
	addr := "127.0.0.1:1" // no service: the registry alone
	registerAdmin("earlier", addr)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("later\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	registerAdminDir(dir, addr)
	if got := AdminToken(t, addr); got != "later" {
		t.Fatalf("AdminToken = %q, want the new process's %q", got, "later")
	}
}
