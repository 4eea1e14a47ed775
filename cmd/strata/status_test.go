package main_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
)

// admin status shows the leader's view of every member: a member that is
// down as silent, probed, its match index left behind; once it is started
// again, replicated to and caught up (lag 0).
func TestStatusShowsAMemberRejoin(t *testing.T) {
	ctx := testContext(t)
	g := testcluster.StartGroup(t, 3)
	leader, err := g.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	down := leader%3 + 1
	addr := regexp.QuoteMeta(g.Addrs[down-1])
	g.Kill(down)
	for i := range 20 { // the log moves on without it
		strataCLI(ctx, t, "fs", "--meta", g.Meta(), "-mkdir", fmt.Sprintf("/d%d", i)).want(t, 0, "", "")
	}
	silent := regexp.MustCompile(`(?m)^\?\s+` + addr + `\s+unreachable\s+\d+\s+Probe, silent\s*$`)
	eventually(ctx, t, "admin status shows the member down", func() bool {
		r := strataCLI(ctx, t, "admin", "status", "--meta", g.Meta())
		return r.code == 1 && silent.MatchString(r.stdout)
	})

	g.Start(down)
	back := regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+%s\s+Follower\s+\d+\s+(\d+)\s+(\d+)\s+0\s+(\d+)\s+Replicate\s+\S+$`, down, addr))
	header := `MEMBER\s+ADDRESS\s+ROLE\s+TERM\s+COMMITTED\s+APPLIED\s+LAG\s+MATCH\s+PROGRESS\s+VERSION\n`
	eventually(ctx, t, "admin status shows the member caught up", func() bool {
		r := strataCLI(ctx, t, "admin", "status", "--meta", g.Meta())
		return r.code == 0 && regexp.MustCompile(`\A`+header).MatchString(r.stdout) && back.MatchString(r.stdout)
	})
}
