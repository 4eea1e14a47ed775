package main_test

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
)

// admin workers goes on showing the live workers right after one dies
// (the service lists a dead worker for a few seconds): the dead one is
// reported on stderr, and the command succeeds.
func TestAdminWorkersAfterAWorkerDies(t *testing.T) {
	ctx := testContext(t)
	p := testcluster.Start(t, t.TempDir(), "meta")
	meta := "--meta=" + p.Addr
	testcluster.StartWorker(t, p.Addr, t.TempDir(), "--cache-size", "16MiB")
	doomed := testcluster.StartWorker(t, p.Addr, t.TempDir(), "--cache-size", "16MiB")
	var ids []string
	eventually(ctx, t, "two workers listed", func() bool {
		r := strataCLI(ctx, t, "admin", "workers", meta)
		ids = nil
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
			ids = append(ids, strings.Fields(line)[0])
		}
		return r.code == 0 && len(ids) == 2
	})
	doomed.Kill()
	r := strataCLI(ctx, t, "admin", "workers", meta)
	if r.code != 0 {
		t.Fatalf("admin workers right after a worker died: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	listed := 0
	for _, id := range ids {
		shown, silent := strings.Contains(r.stdout, id), strings.Contains(r.stderr, id+": ")
		if shown {
			listed++
		}
		if shown && silent {
			t.Fatalf("worker %s is shown and not answering:\n%s%s", id, r.stdout, r.stderr)
		}
	}
	// NB: the dead worker is on stderr until the service drops it (5 s), then gone.
	if listed != 1 || (r.stderr != "" && !strings.Contains(r.stderr, "not answering")) {
		t.Fatalf("want the live worker shown and the dead one on stderr or gone:\n%s%s", r.stdout, r.stderr)
	}
}
