package metaserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Every leader signs block access tokens with the same keys: they derive
// from a secret in the replicated state, so a token the first leader
// issued verifies with the keys a worker gets from the next one.
func TestBlockTokenKeysSurviveAFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	members := testcluster.StartInProcessGroup(t, 3, nil)
	c := clientOf(t, time.Minute, members...)
	first := leaderOf(t, members, -1)
	created, err := members[first].Server.Create(members[first].Context(t, testcluster.Superuser()), &pb.CreateRequest{Header: &pb.Header{User: testcluster.Superuser(),
		ClientName: "test"}, Path: "/f", Permission: 0o644})
	if err != nil || len(created.BlockToken) == 0 {
		t.Fatalf("create: %v, token of %d bytes", err, len(created.GetBlockToken()))
	}
	next := (first + 1) % len(members)
	if err := c.TransferLeader(ctx, uint64(next+1)); err != nil {
		t.Fatal(err)
	}
	for i := 0; leaderOf(t, members, -1) != next; i++ {
		if i == 1000 {
			t.Fatal("the transfer did not happen")
		}
		time.Sleep(5 * time.Millisecond) // polling for the transfer, not synchronising
	}
	hb, err := members[next].Server.Heartbeat(members[next].Context(t, testcluster.Superuser()), &pb.HeartbeatRequest{Worker: &pb.WorkerInfo{Id: "w", Address: "127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	keys := func(id uint32) (blocktoken.Key, bool) {
		for _, k := range hb.BlockKeys {
			if k.Id == id {
				return blocktoken.Key{ID: k.Id, Secret: k.Secret, Expires: k.Expires}, true
			}
		}
		return blocktoken.Key{}, false
	}
	tok, err := blocktoken.Verify(created.BlockToken, time.Now().UnixMilli(), keys)
	if err != nil {
		t.Fatalf("the first leader's token with the next leader's keys: %v", err)
	}
	if err := tok.Allows(blocktoken.Write, "default", created.Status.InodeId, ""); err != nil {
		t.Fatal(err)
	}
}
