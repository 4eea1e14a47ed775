package worker_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// failoverBound is how long a put and a read may take after the leader of
// the namespace service is killed: the retry timeout of the client that
// makes them (which does not retry the data path's calls itself). They
// take an election (under a second) and the client's backoff; 10 s leaves
// room for a loaded machine.
const failoverBound = 10 * time.Second

// A worker given every member of a group of three `strata meta` processes
// follows the group: after its leader is killed with SIGKILL, a put and a
// read, by a client that had not listed the workers before (so the new
// leader must know them), succeed within failoverBound, three times over.
// The test logs each outage (from the kill to the read's end) and their
// median.
func TestDataPathAcrossLeaderKills(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	testcluster.StartWorker(t, g.Meta(), t.TempDir(), "--cache-size", "64MiB")
	ctx := context.Background()
	waitWorkers(t, g.Client(""), 1)
	data := randomBytes(21, testBlockSize+5) // two blocks: not inline
	var outages []time.Duration
	for round := range 3 {
		leader, err := g.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		g.Kill(leader)
		killed := time.Now()
		c, err := client.New(client.Config{Meta: g.Meta(), Token: testcluster.AdminToken(t, g.Meta()), RetryTimeout: failoverBound})
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/after-kill-%d", round)
		writeFile(t, c, path, data)
		got, err := c.ReadFile(ctx, path)
		outage := time.Since(killed)
		c.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round %d: read after killing member %d: %v", round, leader, err)
		}
		outages = append(outages, outage)
		t.Logf("round %d: killed member %d; a put and a read done %v after", round, leader, outage.Round(time.Millisecond))
		g.Start(leader)
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = g.CaughtUp(cctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(outages)
	t.Logf("data-path outage after a leader kill: median %v, max %v", outages[len(outages)/2].Round(time.Millisecond),
		outages[len(outages)-1].Round(time.Millisecond))
}
