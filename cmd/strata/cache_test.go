package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// A load (or uncache) refused for want of a superuser's token says so,
// not to run it again.
func TestLoadRefusedSaysWhy(t *testing.T) {
	p := testcluster.StartDev(t, t.TempDir())
	meta := "--meta=" + p.Addr
	strata(t, time.Minute, nil, strings.NewReader("data"), "fs", meta, "-put", "-", "/f").expect(t, 0, "")
	bob := []string{"STRATA_TOKEN=" + testcluster.Token(t, p.Addr, "bob")}
	for _, verb := range []string{"load", "uncache"} {
		r := strata(t, time.Minute, bob, nil, "admin", verb, meta, "/f")
		if r.code != 1 || strings.Contains(r.err, "run it again") || !strings.Contains(r.err, "1 files failed: refused; "+verb+
			" is a superuser's operation, and running it again with the same token will not help") {
			t.Errorf("admin %s as bob: exit %d\n%s", verb, r.code, r.err)
		}
	}
}
