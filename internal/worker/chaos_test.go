package worker_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The chaos test's bounds. A write or a read started after a fault must
// succeed within its bound of the fault (issue 22: under 3 s after a leader
// kill; these leave room for a loaded 2-core machine and the race
// detector). No operation may take longer than opBound: one that does hung.
const (
	chaosLeaderKills   = 3
	resumeAfterKill    = 20 * time.Second
	bucketPause        = 45 * time.Second // MinIO under SIGSTOP: longer than a hung request is retried (docs/datapath.md)
	resumeAfterBucket  = 30 * time.Second
	opBound            = 90 * time.Second
	checkBound         = 3 * time.Minute // the checks at the end, all of them
	chaosWarmUp        = 60 * time.Second
	chaosSmallBlock    = 1 << 20  // small files: 2 to 4 blocks, single PUTs
	chaosLargeBlock    = 17 << 20 // large files: a 17 MiB block is a multipart upload (16 MiB parts)
	chaosLargeSize     = 18 << 20
	chaosSmallEvery    = 500 * time.Millisecond // the writers' pace: every file is read back at the end
	chaosLargeEvery    = 4 * time.Second
	chaosFullCacheDisk = "512KiB" // the second worker's cache disk fills up after its start: less than a page more
)

// TestChaos runs the data path under faults, all real processes on
// loopback: three `strata meta` members, two workers (the second with a
// cache disk that another program fills once it started) and MinIO.
// Writers stream multi-block files (some of them multipart uploads) and a
// reader reads acknowledged ones back, while the test kills the leader
// three times (restarting each killed member) and stops MinIO with SIGSTOP
// until a write into it fails (bucketPause at most), then resumes it. It
// checks that
//   - writes and reads resume within a bound after each fault, and a write
//     into the hung bucket fails (unavailable) before it is resumed;
//   - no operation hangs (each ends within opBound);
//   - every read returns the right bytes (SHA-256), and every acknowledged
//     file reads back whole at the end;
//   - nothing unacknowledged is visible: a file whose write failed is gone,
//     or (its close committed, the answer lost) whole, and the directory
//     holds nothing else;
//   - no multipart upload is left behind in the bucket;
//   - the worker whose cache disk is full serves reads itself, from the
//     bucket.
func TestChaos(t *testing.T) {
	ch := startChaos(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ch.writer(ctx, 0, chaosSmallBlock, chaosSmallEvery) })
	wg.Go(func() { ch.writer(ctx, 1, chaosLargeBlock, chaosLargeEvery) })
	wg.Go(func() { ch.reader(ctx) })
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stopLoad()

	if !ch.resumed("the start", time.Now(), chaosWarmUp) {
		t.Fatalf("nothing works: %s", ch.lastErrors(time.Time{}))
	}
	for k := range chaosLeaderKills {
		lead, err := ch.group.Leader(ch.ctx)
		if err != nil {
			t.Fatal(err)
		}
		ch.group.Kill(lead)
		ch.resumed(fmt.Sprintf("leader kill %d (member %d)", k+1, lead), time.Now(), resumeAfterKill)
		ch.group.Start(lead)
		ch.caughtUp()
	}
	ch.minio.Pause(t)
	// The load runs into the hung bucket until a write fails for it, or
	// bucketPause passes.
	paused := time.Now()
	for time.Since(paused) < bucketPause && ch.unavailableWrite(paused) == nil {
		pollPause()
	}
	ch.minio.Resume(t)
	ch.failedInTime("MinIO stopped", paused, paused.Add(bucketPause))
	ch.resumed("MinIO resumed after SIGSTOP", time.Now(), resumeAfterBucket)
	stopLoad()

	ch.checkOperations()
	ctx, cancelChecks := context.WithTimeout(ch.ctx, checkBound)
	defer cancelChecks()
	ch.checkAcknowledged(ctx)
	ch.checkUnacknowledged(ctx)
	ch.checkUploads()
	ch.checkFullCacheServed(ctx)
}

// chaos is the cluster under test and what its load saw.
type chaos struct {
	t     *testing.T
	ctx   context.Context // the test's bound
	group *testcluster.Group
	minio *miniotest.Server
	full  *testcluster.Process // the worker whose cache disk is full
	c     *client.Client
	ns    string
	mu    struct {
		sync.Mutex
		acked, unacked []chaosFile
		ops            []chaosOp
	}
}

// chaosFile is a file a writer wrote, or tried to.
type chaosFile struct {
	path  string
	seed  uint64
	size  int
	block int64
	sum   [32]byte
}

// chaosOp is one write or read of the load.
type chaosOp struct {
	write      bool
	path       string
	start, end time.Time
	err        error
}

func startChaos(t *testing.T) *chaos {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	minio := miniotest.Start(t)
	cfg := minio.Config(t)
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretAccessKey)
	g := testcluster.StartGroup(t, 3)
	ch := &chaos{t: t, ctx: ctx, group: g, minio: minio, c: g.Client(""), ns: "chaos"}
	uri := fmt.Sprintf("s3://%s/strata?endpoint=%s&region=%s", cfg.Bucket, url.QueryEscape(cfg.Endpoint), cfg.Region)
	if err := ch.c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: ch.ns,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: uri}); err != nil {
		t.Fatal(err)
	}
	// Workers take every member, and follow the leader among them. They
	// try again to abort a failed write's uploads every 5 s instead of 30,
	// so that checkUploads sees those a resumed MinIO started late (a
	// queued CreateMultipart) aborted within its bound.
	abort := []string{"--cache-size", "256MiB", "--bucket-abort-interval", "5s"}
	testcluster.StartWorker(t, g.Meta(), t.TempDir(), abort...)
	ch.full = testcluster.StartWorker(t, g.Meta(), t.TempDir(), append(abort,
		"--fault-cache-disk-full-after", chaosFullCacheDisk)...)
	if _, err := ch.c.Mkdirs(ctx, ch.path("/d"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ch
}

func (ch *chaos) path(p string) string { return "strata://" + ch.ns + p }

// writer writes new files of 2 to 4 blocks of block bytes, one every
// pace, until ctx ends.
func (ch *chaos) writer(ctx context.Context, id int, block int64, pace time.Duration) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := 0; ; i++ {
		size := int(block) + 1 + rand.IntN(int(block))
		if block == chaosLargeBlock {
			size = chaosLargeSize
		} else if i%2 == 0 {
			size += 2 * int(block)
		}
		f := chaosFile{path: ch.path(fmt.Sprintf("/d/w%d-%d", id, i)), seed: uint64(id)<<32 | uint64(i), size: size, block: block}
		data := randomBytes(f.seed, f.size)
		f.sum = sha256.Sum256(data)
		start := time.Now()
		err := ch.write(f, data)
		ch.record(chaosOp{write: true, path: f.path, start: start, end: time.Now(), err: err}, f)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// write writes f, bounded by opBound. The load's end does not cut it
// short: a write the test cancelled would count as failed.
func (ch *chaos) write(f chaosFile, data []byte) error {
	ctx, cancel := context.WithTimeout(ch.ctx, opBound)
	defer cancel()
	w, err := ch.c.Create(ctx, f.path, client.CreateOptions{BlockSize: uint64(f.block)})
	if err != nil {
		return err
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 256<<10+17)
		if _, err := w.Write(rest[:n]); err != nil {
			w.Close()
			return err
		}
		rest = rest[n:]
	}
	return w.Close()
}

// reader reads acknowledged files, the latest ones more often, until ctx
// ends.
func (ch *chaos) reader(ctx context.Context) {
	for ctx.Err() == nil {
		ch.mu.Lock()
		acked := ch.mu.acked
		ch.mu.Unlock()
		if len(acked) == 0 {
			pollPause()
			continue
		}
		f := acked[len(acked)-1-min(len(acked)-1, rand.IntN(8))]
		if rand.IntN(2) == 0 {
			f = acked[rand.IntN(len(acked))]
		}
		start := time.Now()
		err := ch.read(ch.ctx, f)
		ch.record(chaosOp{path: f.path, start: start, end: time.Now(), err: err}, chaosFile{})
	}
}

// read reads f whole and checks its content, bounded by opBound.
func (ch *chaos) read(ctx context.Context, f chaosFile) error {
	ctx, cancel := context.WithTimeout(ctx, opBound)
	defer cancel()
	got, err := ch.c.ReadFile(ctx, f.path)
	if err != nil {
		return err
	}
	if len(got) != f.size || sha256.Sum256(got) != f.sum {
		ch.t.Errorf("read of acknowledged %s returned other bytes: %d bytes, want %d", f.path, len(got), f.size)
		return errors.New("wrong content")
	}
	return nil
}

func (ch *chaos) record(op chaosOp, f chaosFile) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.mu.ops = append(ch.mu.ops, op)
	switch {
	case !op.write:
	case op.err == nil:
		ch.mu.acked = append(ch.mu.acked, f)
	default:
		ch.mu.unacked = append(ch.mu.unacked, f)
	}
}

// resumed waits until a write and a read that started after since have
// succeeded, and reports whether both did within bound of since; if not, the
// test fails with the errors seen since.
func (ch *chaos) resumed(after string, since time.Time, bound time.Duration) bool {
	ch.t.Helper()
	deadline := since.Add(bound)
	for {
		w, r := ch.firstSuccess(since, true), ch.firstSuccess(since, false)
		if !w.IsZero() && !r.IsZero() && !w.After(deadline) && !r.After(deadline) {
			ch.t.Logf("%s: a write succeeded %v after it, a read %v", after,
				w.Sub(since).Round(time.Millisecond), r.Sub(since).Round(time.Millisecond))
			return true
		}
		if time.Now().After(deadline) {
			ch.t.Errorf("%s: writes and reads did not both resume within %v (first write acknowledged after %s, "+
				"first read after %s); since then: %s", after, bound, sinceOr(w, since), sinceOr(r, since), ch.lastErrors(since))
			return false
		}
		pollPause()
	}
}

// failedInTime checks that a write started after since failed, with an
// unavailable-class error, before until: a hung bucket is given up on
// (writes always reach the bucket; reads may be served from a cache).
func (ch *chaos) failedInTime(what string, since, until time.Time) {
	ch.t.Helper()
	if op := ch.unavailableWrite(since); op != nil && !op.end.After(until) {
		ch.t.Logf("%s: a write failed %v after it, %v after its start: %v", what,
			op.end.Sub(since).Round(time.Millisecond), op.end.Sub(op.start).Round(time.Millisecond), op.err)
		return
	}
	ch.t.Errorf("%s: no write started after it failed as unavailable within %v; since then: %s", what, until.Sub(since), ch.lastErrors(since))
}

// unavailableWrite returns the first write started after since that failed
// with an unavailable-class error, or nil.
func (ch *chaos) unavailableWrite(since time.Time) *chaosOp {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for _, op := range ch.mu.ops {
		if op.write && !op.start.Before(since) && errors.Is(op.err, fserr.ErrUnavailable) {
			return &op
		}
	}
	return nil
}

// firstSuccess returns when the first successful write (or read) that
// started after since ended (zero if none did).
func (ch *chaos) firstSuccess(since time.Time, write bool) time.Time {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var first time.Time
	for _, op := range ch.mu.ops {
		if op.write == write && op.err == nil && !op.start.Before(since) && (first.IsZero() || op.end.Before(first)) {
			first = op.end
		}
	}
	return first
}

func sinceOr(t, since time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Sub(since).Round(time.Millisecond).String()
}

// lastErrors describes the load's failures since a time: how many, and
// the latest of writes and of reads.
func (ch *chaos) lastErrors(since time.Time) string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var writes, reads int
	var lastW, lastR error
	for _, op := range ch.mu.ops {
		if op.err == nil || op.start.Before(since) {
			continue
		}
		if op.write {
			writes, lastW = writes+1, op.err
		} else {
			reads, lastR = reads+1, op.err
		}
	}
	return fmt.Sprintf("%d failed writes (latest: %v), %d failed reads (latest: %v)", writes, lastW, reads, lastR)
}

// caughtUp waits until every member has applied the leader's commit index.
func (ch *chaos) caughtUp() {
	ch.t.Helper()
	for {
		var commit uint64
		sts := ch.c.MemberStatuses(ch.ctx)
		for _, st := range sts {
			if st.Err == nil && st.Status.Role == "StateLeader" {
				commit = st.Status.CommittedIndex
			}
		}
		behind := commit == 0
		for _, st := range sts {
			behind = behind || st.Err != nil || st.Status.AppliedIndex < commit
		}
		if !behind {
			return
		}
		if ch.ctx.Err() != nil {
			ch.t.Fatal("the members did not catch up before the test's deadline")
		}
		pollPause()
	}
}

// checkOperations fails the test for every operation of the load that hung
// (ended by opBound, not by an answer).
func (ch *chaos) checkOperations() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var writes, reads int
	for _, op := range ch.mu.ops {
		if op.write {
			writes++
		} else {
			reads++
		}
		if op.end.Sub(op.start) >= opBound {
			ch.t.Errorf("a %s of %s hung for %v: %v", kind(op.write), op.path, op.end.Sub(op.start).Round(time.Second), op.err)
		}
	}
	ch.t.Logf("the load: %d writes (%d acknowledged), %d reads", writes, len(ch.mu.acked), reads)
}

func kind(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

// checkAcknowledged reads back every acknowledged file.
func (ch *chaos) checkAcknowledged(ctx context.Context) {
	var bad []string
	for _, f := range ch.mu.acked {
		if err := ch.read(ctx, f); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", f.path, err))
		}
	}
	if len(bad) > 0 {
		ch.t.Errorf("%d of %d acknowledged files do not read back, e.g.:\n%s", len(bad), len(ch.mu.acked),
			strings.Join(bad[:min(len(bad), 5)], "\n"))
	}
}

// checkUnacknowledged checks that a file whose write failed is not there,
// or is whole (its close committed but the answer was lost), and that the
// directory holds nothing but files written. A failed writer deletes its
// file itself; the test waits for a lease's time at most for that.
func (ch *chaos) checkUnacknowledged(ctx context.Context) {
	wanted := map[string]bool{}
	for _, f := range ch.mu.acked {
		wanted[f.path] = true
	}
	deadline := time.Now().Add(75 * time.Second) // the lease's soft limit, 60 s, and some
	for {
		problems := ch.unacknowledgedProblems(ctx, wanted)
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			ch.t.Errorf("unacknowledged writes are visible:\n%s", strings.Join(problems[:min(len(problems), 10)], "\n"))
			return
		}
		pollPause()
	}
}

func (ch *chaos) unacknowledgedProblems(ctx context.Context, wanted map[string]bool) []string {
	var problems []string
	whole := map[string]bool{}
	for _, f := range ch.mu.unacked {
		st, err := ch.c.Stat(ctx, f.path)
		switch {
		case errors.Is(err, fserr.ErrNotFound):
			continue
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", f.path, err))
			continue
		case st.Length != uint64(f.size):
			problems = append(problems, fmt.Sprintf("%s: %d bytes, written %d, not acknowledged", f.path, st.Length, f.size))
			continue
		}
		if err := ch.read(ctx, f); err != nil {
			problems = append(problems, fmt.Sprintf("%s, not acknowledged: %v", f.path, err))
			continue
		}
		whole[f.path] = true
	}
	entries, err := ch.c.ReadDir(ctx, ch.path("/d"))
	if err != nil {
		return append(problems, fmt.Sprintf("listing: %v", err))
	}
	for _, e := range entries {
		p := ch.path("/d/" + e.Name)
		if !wanted[p] && !whole[p] && !slices.ContainsFunc(ch.mu.unacked, func(f chaosFile) bool { return f.path == p }) {
			problems = append(problems, fmt.Sprintf("%s: listed, never written", p))
		}
	}
	return problems
}

// checkUploads checks that no multipart upload was left behind.
func (ch *chaos) checkUploads() {
	deadline := time.Now().Add(30 * time.Second) // for aborts under way
	for {
		ups, err := ch.minio.PendingUploads()
		if err != nil {
			ch.t.Fatal(err)
		}
		if len(ups) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ch.t.Errorf("%d multipart uploads left in the bucket: %v", len(ups), ups[:min(len(ups), 5)])
			return
		}
		pollPause()
	}
}

// checkFullCacheServed checks that the worker whose cache disk is full
// served reads itself, from the bucket: the client reads a block from its
// home worker first, and half the blocks are at home there. (A worker that
// fails the reads it cannot cache leaves them to the other worker, and
// serves nothing.)
func (ch *chaos) checkFullCacheServed(ctx context.Context) {
	m := regexp.MustCompile(`strata: worker (\S+) serving on `).FindStringSubmatch(ch.full.Stderr())
	if m == nil {
		ch.t.Fatalf("no worker id in the output of the worker with the full cache:\n%s", ch.full.Stderr())
	}
	stats, err := ch.c.WorkerStats(ctx)
	if err != nil {
		ch.t.Fatal(err)
	}
	id := m[1]
	for _, st := range stats {
		if st.WorkerId != id {
			continue
		}
		ch.t.Logf("the worker with the full cache disk: %d bytes read from the bucket, %d served, %d cached blocks",
			st.BucketBytesRead, st.RpcBytesRead, st.CachedBlocks)
		if st.RpcBytesRead == 0 {
			ch.t.Errorf("the worker with the full cache disk served no read (its own answers failed, the other worker served them)")
		}
		return
	}
	ch.t.Errorf("the worker with the full cache disk (%s) is not among the live workers", id)
}
