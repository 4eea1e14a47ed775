package databench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/object"
)

// ErrNoCacheControl is DropCache on a cluster whose workers' caches the
// benchmark cannot empty.
var ErrNoCacheControl = errors.New("databench: the workers' caches cannot be emptied from here")

// Link describes the emulated link between the workers and the bucket.
type Link struct {
	// Bandwidth is the limit of each direction, bytes per second; 0 means
	// unlimited.
	Bandwidth float64 `json:"bandwidth_bytes_per_sec"`
	// Latency is added before every request to the bucket.
	Latency time.Duration `json:"latency_ns"`
	// Scaling says what the link stands for, for the report's header.
	Scaling string `json:"scaling,omitempty"`
}

// Cluster is the Strata side of the benchmark. Its methods may be called
// concurrently.
type Cluster interface {
	// Client returns the client the benchmark reads and writes through.
	Client() *client.Client
	// Describe says what the cluster is, for the report's header.
	Describe() string
	// Link returns the link to the bucket, nil if unknown.
	Link() *Link
	// DropCache empties the caches of all workers, or fails with
	// ErrNoCacheControl.
	DropCache(ctx context.Context) error
	// CacheDirs returns the directories of the workers' caches, nil if
	// unknown; the disk phase drops their files from the OS page cache.
	CacheDirs() []string
}

// Bucketed is a Cluster whose namespace is in cache mode over a bucket the
// benchmark reaches directly, as any other S3 client would: cache mode's
// files are put there, not written through Strata, and the direct way
// reads them back from there.
type Bucketed interface {
	Cluster
	// Bucket returns the namespace's bucket, through the same link as the
	// workers' and the retry layer, or nil if the namespace is not in
	// cache mode. The object of Strata path p is at key
	// statemachine.ObjectKey(p).
	Bucket() object.Store
}

// Counters are the workers' data path counters, summed over the workers.
type Counters struct {
	BucketRead        uint64 `json:"bucket_bytes_read"` // bytes from the bucket to the workers
	BucketWritten     uint64 `json:"bucket_bytes_written"`
	RPC               uint64 `json:"rpc_bytes"`           // bytes sent to clients in Read responses
	ShortCircuit      uint64 `json:"short_circuit_bytes"` // bytes of cache files lent to clients (read then or later)
	ShortCircuitOpens uint64 `json:"short_circuit_opens"` // short-circuit requests answered (leases granted)
}

func (c Counters) minus(o Counters) Counters {
	return Counters{c.BucketRead - o.BucketRead, c.BucketWritten - o.BucketWritten, c.RPC - o.RPC,
		c.ShortCircuit - o.ShortCircuit, c.ShortCircuitOpens - o.ShortCircuitOpens}
}

func (c Counters) plus(o Counters) Counters {
	return Counters{c.BucketRead + o.BucketRead, c.BucketWritten + o.BucketWritten, c.RPC + o.RPC,
		c.ShortCircuit + o.ShortCircuit, c.ShortCircuitOpens + o.ShortCircuitOpens}
}

// counters reads the workers' counters through the client.
func counters(ctx context.Context, c *client.Client) (Counters, error) {
	stats, err := c.WorkerStats(ctx)
	if err != nil {
		return Counters{}, fmt.Errorf("worker counters: %w", err)
	}
	var s Counters
	for _, st := range stats {
		s = s.plus(Counters{st.BucketBytesRead, st.BucketBytesWritten, st.RpcBytesRead,
			st.ShortCircuitBytes, st.ShortCircuitOpens})
	}
	return s, nil
}

// Remote is a running cluster reached through a client. The benchmark
// cannot empty its workers' caches nor knows its link to the bucket.
type Remote struct {
	C    *client.Client
	Addr string
}

// Client implements Cluster.
func (r *Remote) Client() *client.Client { return r.C }

// Describe implements Cluster.
func (r *Remote) Describe() string {
	return "running cluster at " + r.Addr + " (its workers' link to the bucket is unknown and their caches cannot be emptied from here: no cold phases)"
}

// Link implements Cluster.
func (r *Remote) Link() *Link { return nil }

// DropCache implements Cluster.
func (r *Remote) DropCache(context.Context) error { return ErrNoCacheControl }

// CacheDirs implements Cluster.
func (r *Remote) CacheDirs() []string { return nil }
