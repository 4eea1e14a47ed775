package statuspage_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestMetricFamilies does, on real processes, what each family counts,
// then reads it off the processes' /metrics: the calls (over callwire and
// gRPC, failed and not), the operations, Raft (proposals, batches,
// indexes, a follower down and its lag, a leader change, a snapshot sent
// and restored), pebble and the hot cache, each namespace's usage and the
// leases, and the data path (bytes by way, the cache's hits, misses,
// evictions and fill, bucket requests and their latency). Every scrape
// then passes promtool's check, and the Grafana dashboard asks for no
// family the processes do not serve.
func TestMetricFamilies(t *testing.T) {
	cl := startCluster(t, nil, []string{"--cache-size", "3MiB"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lead := cl.leader()
	leaderHTTP, workerHTTP := cl.g.Member(lead).HTTP(), cl.worker.HTTP()
	if leaderHTTP == "" || workerHTTP == "" {
		t.Fatalf("no HTTP listener announced: leader %q, worker %q", leaderHTTP, workerHTTP)
	}

	// Files: five of 1 MiB in "default" (a 3 MiB cache evicts), one in "lake".
	for i := range 5 {
		mustNot(t, cl.c.WriteFile(ctx, filePath(i), data(1<<20), client.CreateOptions{}), "write %s", filePath(i))
	}
	mustNot(t, cl.c.WriteFile(ctx, "strata://lake/t/part-0", data(3000), client.CreateOptions{}), "write to lake")
	// A read of the first (evicted: from the bucket), the last (cached:
	// short-circuit), and the last again over the worker's RPC.
	for _, i := range []int{0, 4} {
		got, err := cl.c.ReadFile(ctx, filePath(i))
		if err != nil || !bytes.Equal(got, data(1<<20)) {
			t.Fatalf("read %s: %d bytes, %v", filePath(i), len(got), err)
		}
	}
	rpc := newClient(t, cl, client.Config{NoShortCircuit: true, GRPCOnly: true})
	if _, err := rpc.ReadFile(ctx, filePath(4)); err != nil {
		t.Fatal(err)
	}
	// A bad page in the cache: dropped and fetched again.
	if testcluster.CorruptCache(t, cl.workerDir, 100) == 0 {
		t.Fatal("no cache file to corrupt")
	}
	if got, err := rpc.ReadFile(ctx, filePath(4)); err != nil || !bytes.Equal(got, data(1<<20)) {
		t.Fatalf("read over a corrupt page: %d bytes, %v", len(got), err)
	}
	// A namespace deleted to the trash.
	old := filepath.Join(t.TempDir(), "old")
	mustNot(t, os.Mkdir(old, 0o700), "mkdir")
	mustNot(t, cl.c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "old", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK,
		StoreUri: "file://" + old}), "create namespace old")
	mustNot(t, cl.c.WriteFile(ctx, "strata://old/f", []byte("x"), client.CreateOptions{}), "write to old")
	_, err := cl.c.DeleteNamespace(ctx, "old", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH)
	mustNot(t, err, "delete namespace old to the trash")
	// Failed calls, over both transports.
	for _, c := range []*client.Client{cl.c, rpc} {
		if _, err := c.Stat(ctx, "/no/such/file"); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("stat of a missing file: %v", err)
		}
	}
	// A file being written holds a lease.
	w, err := cl.c.Create(ctx, "/open/file", client.CreateOptions{})
	mustNot(t, err, "create")
	defer w.Close()

	s := eventually(t, leaderHTTP, "the namespaces' usage", func(s scrape) bool {
		v, _ := s.lookup("strata_namespace_files", "namespace=default")
		return v == 6
	})
	checkCalls(t, s)
	checkMember(t, s)
	ws := eventually(t, workerHTTP, "the worker's evictions", func(s scrape) bool {
		v, _ := s.lookup("strata_cache_evictions_total")
		return v > 0
	})
	checkWorker(t, ws)
	// A deleted file's blocks are the leader's garbage, removed from the
	// bucket by its collector (every 10 s): the service's own bucket
	// requests are metered too.
	_, err = cl.c.Delete(ctx, filePath(1), false)
	mustNot(t, err, "delete %s", filePath(1))
	eventually(t, leaderHTTP, "the collector's delete of the block", func(s scrape) bool {
		v, _ := s.lookup("strata_bucket_requests_total", "op=delete")
		return v >= 1
	})

	leaderChangeAndSnapshot(t, cl, lead)

	var all []scrape
	for _, addr := range []string{cl.g.Member(1).HTTP(), cl.g.Member(2).HTTP(), cl.g.Member(3).HTTP(), workerHTTP} {
		s, text := get(t, addr)
		promtoolCheck(t, text)
		all = append(all, s)
	}
	checkDashboard(t, append(all, bucketFaults(t))...)
}

func filePath(i int) string { return "/data/f" + string(rune('0'+i)) }

// newClient is a client of the cluster's superuser with cfg's settings.
func newClient(t *testing.T, cl *cluster, cfg client.Config) *client.Client {
	t.Helper()
	cfg.Meta, cfg.Token = cl.g.Meta(), cl.admin
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func checkCalls(t *testing.T, s scrape) {
	t.Helper()
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{"strata_rpc_server_handled_total", []string{"method=Create", "transport=callwire", "class=OK"}},
		{"strata_rpc_server_handled_total", []string{"method=GetFileStatus", "transport=callwire", "class=NOT_FOUND"}},
		{"strata_rpc_server_handled_total", []string{"method=GetFileStatus", "transport=grpc", "class=NOT_FOUND"}},
		{"strata_rpc_server_handled_total", []string{"method=Heartbeat", "transport=grpc", "class=OK"}},
		{"strata_rpc_server_handling_seconds", []string{"method=Open"}},
		{"strata_meta_ops_total", []string{"op=Create", "class=OK"}},
		{"strata_meta_ops_total", []string{"op=GetFileStatus", "class=NOT_FOUND"}},
		{"strata_meta_op_duration_seconds", []string{"op=Complete"}},
	} {
		if v := s.value(t, tc.name, tc.labels...); v < 1 {
			t.Errorf("%s%v = %v, want at least 1", tc.name, tc.labels, v)
		}
	}
}

func checkMember(t *testing.T, s scrape) {
	t.Helper()
	atLeast := map[string]float64{
		"strata_raft_proposals_total": 10, "strata_raft_proposal_commands": 10, "strata_raft_apply_batch_entries": 10,
		"strata_raft_term": 1, "strata_raft_commit_index": 10, "strata_raft_applied_index": 10, "strata_raft_last_index": 10,
		"strata_raft_leader": 1, "strata_raft_is_leader": 1, "strata_raft_members": 3, "strata_raft_leader_changes_total": 1,
		"strata_hot_cache_hits_total": 1, "strata_pebble_disk_bytes": 1, "strata_meta_open_files": 1,
		"strata_meta_live_workers": 1, "strata_build_info": 1, "strata_connections_open": 1,
	}
	for name, want := range atLeast {
		if v := s.value(t, name); v < want {
			t.Errorf("%s = %v, want at least %v", name, v, want)
		}
	}
	for _, name := range []string{"strata_raft_follower_match_index", "strata_pebble_compactions_total", "strata_pebble_compaction_debt_bytes",
		"strata_pebble_read_amplification", "strata_pebble_block_cache_hits_total", "strata_pebble_block_cache_misses_total",
		"strata_hot_cache_misses_total", "strata_meta_garbage_blocks", "strata_raft_last_snapshot_bytes"} {
		s.value(t, name) // present (pebble's compactions: internal/kv/pebblekv's TestStats)
	}
	for _, tc := range []struct {
		name, ns string
		want     float64
	}{{"strata_namespace_files", "default", 6}, {"strata_namespace_bytes", "default", 5 << 20},
		{"strata_namespace_files", "lake", 1}, {"strata_namespace_bytes", "lake", 3000}, {"strata_namespace_directories", "lake", 2},
		{"strata_namespace_in_trash", "old", 1}, {"strata_namespace_in_trash", "lake", 0}} {
		if v := s.value(t, tc.name, "namespace="+tc.ns, "mode=block"); v != tc.want {
			t.Errorf("%s{namespace=%s} = %v, want %v", tc.name, tc.ns, v, tc.want)
		}
	}
	for m := 1; m <= 3; m++ {
		if v := s.value(t, "strata_raft_follower_answering", "member="+string(rune('0'+m))); v != 1 {
			t.Errorf("member %d answering = %v, want 1", m, v)
		}
	}
}

func checkWorker(t *testing.T, s scrape) {
	t.Helper()
	for _, tc := range []struct {
		name   string
		labels []string
		least  float64
	}{
		{"strata_read_bytes_total", []string{"way=short_circuit"}, 1 << 20},
		{"strata_read_bytes_total", []string{"way=worker_rpc"}, 1 << 20},
		{"strata_read_bytes_total", []string{"way=bucket"}, 1 << 20},
		{"strata_written_bytes_total", []string{"way=bucket"}, 5 << 20},
		{"strata_cache_hits_total", nil, 1},
		{"strata_cache_misses_total", nil, 1},
		{"strata_cache_evictions_total", nil, 1},
		{"strata_cache_evicted_bytes_total", nil, 1 << 20},
		{"strata_cache_filled_bytes_total", nil, 5 << 20},
		{"strata_cache_used_bytes", nil, 1},
		{"strata_cache_capacity_bytes", nil, 3 << 20},
		{"strata_worker_short_circuit_opens_total", nil, 1},
		{"strata_worker_blocks_written_total", nil, 5},
		{"strata_cache_corruptions_total", nil, 1},
		{"strata_cache_blocks", nil, 1},
		{"strata_bucket_requests_total", []string{"op=get"}, 1},
		{"strata_bucket_request_duration_seconds", []string{"op=get"}, 1},
		{"strata_rpc_server_handled_total", []string{"service=strata.v1.WorkerService", "method=Read", "class=OK"}, 1},
		{"strata_connections_open", []string{"port=worker"}, 1},
	} {
		if v := s.value(t, tc.name, tc.labels...); v < tc.least {
			t.Errorf("worker: %s%v = %v, want at least %v", tc.name, tc.labels, v, tc.least)
		}
	}
	wrote := s.value(t, "strata_bucket_requests_total", "op=put") + s.value(t, "strata_bucket_requests_total", "op=upload-part")
	if wrote < 5 {
		t.Errorf("worker: %v puts and parts for 5 files of 1 MiB", wrote)
	}
}

// leaderChangeAndSnapshot moves the lead, stops a follower and sees the
// leader say so (its lag grows, it does not answer), then replaces it with
// an empty member that joins: the leader sends it a snapshot, it restores
// it.
func leaderChangeAndSnapshot(t *testing.T, cl *cluster, lead int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := lead%3 + 1
	before := get1(t, cl.g.Member(next).HTTP(), "strata_raft_leader_changes_total")
	mustNot(t, cl.c.TransferLeader(ctx, uint64(next)), "transfer the lead to %d", next)
	eventually(t, cl.g.Member(next).HTTP(), "a leader change", func(s scrape) bool {
		v, _ := s.lookup("strata_raft_leader_changes_total")
		lead, _ := s.lookup("strata_raft_is_leader")
		return v > before && lead == 1
	})
	victim := next%3 + 1
	cl.g.Kill(victim)
	for i := range 20 {
		mustNot(t, cl.c.WriteFile(ctx, "/after/f"+string(rune('a'+i)), []byte("x"), client.CreateOptions{}), "write")
	}
	id := "member=" + string(rune('0'+victim))
	eventually(t, cl.g.Member(next).HTTP(), "a follower down", func(s scrape) bool {
		answering, _ := s.lookup("strata_raft_follower_answering", id)
		lag, _ := s.lookup("strata_raft_follower_lag_entries", id)
		return answering == 0 && lag >= 20
	})
	_, err := cl.c.RemoveMember(ctx, uint64(victim), false)
	mustNot(t, err, "remove member %d", victim)
	mustNot(t, os.RemoveAll(cl.g.MemberDir(victim)), "remove its data")
	// A learner first, which the leader records before the member asks to
	// join; then a voter, once it caught up (from the snapshot).
	_, err = cl.c.AddMember(ctx, uint64(victim), cl.g.Addrs[victim-1], true)
	mustNot(t, err, "add member %d as a learner", victim)
	var others []string
	for i, a := range cl.g.Addrs {
		if i+1 != victim {
			others = append(others, a)
		}
	}
	p := cl.g.Start(victim, "--join", strings.Join(others, ","), "--initial-cluster", "")
	_, err = cl.c.AddMember(ctx, uint64(victim), cl.g.Addrs[victim-1], false)
	mustNot(t, err, "make member %d a voter", victim)
	eventually(t, cl.g.Member(next).HTTP(), "a snapshot sent", func(s scrape) bool {
		v, _ := s.lookup("strata_raft_snapshots_total", "kind=sent", "result=ok")
		return v >= 1
	})
	s := eventually(t, p.HTTP(), "a snapshot restored", func(s scrape) bool {
		v, _ := s.lookup("strata_raft_snapshots_total", "kind=restored", "result=ok")
		return v >= 1
	})
	if v := s.value(t, "strata_raft_snapshot_bytes", "kind=restored"); v < 1 {
		t.Errorf("restored snapshots' sizes observed %v times", v)
	}
	if v := s.value(t, "strata_raft_last_snapshot_bytes"); v < 1 {
		t.Errorf("last snapshot of %v bytes", v)
	}
	s.value(t, "strata_raft_snapshot_duration_seconds", "kind=restored")
}

func get1(t *testing.T, addr, name string, labels ...string) float64 {
	t.Helper()
	s, _ := get(t, addr)
	v, _ := s.lookup(name, labels...)
	return v
}

// promtoolCheck runs `promtool check metrics` on a scrape: Prometheus'
// own lint of names, units, help and types.
func promtoolCheck(t *testing.T, text string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// promtool is the promtool that scripts/promtool/install.sh installs
// (make test does), or $STRATA_PROMTOOL.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STRATA_PROMTOOL"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(strings.TrimSpace(string(out))), ".cache", "bin", "promtool")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no promtool at %s: install it with scripts/promtool/install.sh (make test does), or set STRATA_PROMTOOL", p)
	}
	return p
}
