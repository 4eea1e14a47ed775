package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestBenchMetaMembers runs `bench meta --members 1` as a user would, with
// no TLS settings in the environment: the group it starts serves plaintext
// on loopback, and its clients must connect in plaintext too.
func TestBenchMetaMembers(t *testing.T) {
	cmd := exec.Command(testcluster.Binary(t), "bench", "meta", "--members", "1",
		"--threads", "2", "--files", "40", "--ops", "create,stat", "--quiet")
	cmd.Env = append(cmd.Environ(), "STRATA_NO_PROGRESS=1")
	r := finish(t, cmd, 2*time.Minute)
	if r.code != 0 {
		t.Fatalf("bench meta --members 1: exit %d\nstderr: %s", r.code, r.err)
	}
	for _, want := range []string{"== 1 member(s)", "create", "stat"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
}
