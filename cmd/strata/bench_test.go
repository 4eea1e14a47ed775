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

// TestBenchMetaGoverned runs `bench meta --embedded` as a user who is not
// the superuser, in a base directory the superuser keeps (mode 0700) under
// quotas, reached only through a named-user ACL entry and a default ACL:
// every operation succeeds (so the ACL is what lets the user in), and the
// flags that need others are refused as usage errors.
func TestBenchMetaGoverned(t *testing.T) {
	cmd := exec.Command(testcluster.Binary(t), "bench", "meta", "--embedded", "--embedded-user", "benchuser",
		"--governed", "--inherit-acl", "--threads", "2", "--files", "40", "--ops", "create,stat,rename", "--quiet")
	cmd.Env = append(cmd.Environ(), "STRATA_NO_PROGRESS=1")
	r := finish(t, cmd, 2*time.Minute)
	if r.code != 0 || !strings.Contains(r.out, "rename") {
		t.Fatalf("bench meta --governed: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	for _, bad := range []struct{ args, err string }{
		{"--embedded --governed", "strata: --governed needs --embedded-user\n"},
		{"--embedded --embedded-user u --inherit-acl", "strata: --inherit-acl needs --governed\n"},
		{"--embedded-user u", "strata: --embedded-user needs --embedded, with authentication\n"},
	} {
		cmd := exec.Command(testcluster.Binary(t), append([]string{"bench", "meta", "--quiet"}, strings.Fields(bad.args)...)...)
		r := finish(t, cmd, time.Minute)
		if r.code != 2 || r.err != bad.err {
			t.Errorf("bench meta %s: exit %d, stderr %q; want 2 and %q", bad.args, r.code, r.err, bad.err)
		}
	}
}
