// Package linkproxy is a TCP proxy whose connections all cross one emulated
// network link (internal/object/throttle): put in front of an S3 endpoint
// such as MinIO, it makes every client of the bucket share one bandwidth
// limit, whatever the client is. make bench-tpcds puts it between MinIO and
// both Spark's S3A (s3a:// straight to the bucket) and Strata's worker
// (strata:// in cache mode), so that the two ways meet the same link, the
// way seed 000's OSS bandwidth limit applied to a whole cluster.
//
// It counts the bytes each way (Stats), which is how the benchmark measures
// the bytes read from the bucket per way, and its limit can be changed while
// connections are open (SetBandwidth), so that one proxy serves a run's
// several bandwidth settings without breaking the clients' pooled
// connections. Handler serves both over HTTP for a proxy in another process
// ("strata bench proxy").
//
// What it is not: an HTTP proxy. It moves bytes and knows nothing of
// requests, so it adds no per-request latency (throttle's Latency is not
// applied) and it never fails or retries anything on its own.
package linkproxy
