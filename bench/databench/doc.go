// Package databench is the engine of "strata bench data": it measures the
// data path, sequential writes and reads of large files and random reads of
// 4 KiB to 1 MiB, three ways in one run, side by side on the same machine:
//
//	cold  from the bucket, through the emulated link (the cache emptied)
//	warm  from the worker's cache, short-circuit when the worker shares
//	      this host
//	raw   the same bytes in plain files on the same local file system,
//	      read with pread: the baseline a cache cannot beat
//
// and reports MB/s (10^6 bytes per second), ops/s and latency percentiles,
// with the ratios the design's targets are stated in: warm over raw, cold
// over the link's bandwidth. An optional sweep over block sizes measures
// write and cold read throughput per block size, to choose the default by
// measurement.
//
// In cache mode (Config.Mode) the files are objects the benchmark puts
// straight into the bucket, as any S3 client would, read through a
// cache-mode namespace over it; a fourth way, direct, reads the same
// objects from the bucket through the same link with no Strata at all (as
// S3A's prefetching stream reads: ranged GETs, several in flight), so that
// what Strata costs or gains on a miss is measured beside the link's
// bandwidth.
//
// The Strata side runs against a Cluster: by default an Embedded one (a
// namespace service and one worker in this process, the worker's bucket a
// local directory behind a bandwidth and latency limiter), which is what
// makes the cold numbers meaningful and DropCache possible; or a running
// cluster reached by address, where the cold phases are skipped because
// nothing can empty a remote worker's cache.
//
// Every file's content is a deterministic pattern (see pattern), so that a
// raw file holds exactly the bytes of its Strata twin and every read is
// checked cheaply: the first and last bytes of each read always, all of
// them with Config.Verify. A read that fails or returns wrong bytes ends
// the run: a throughput of wrong data is no measurement.
//
// What it is not: a test. Nothing here asserts a timing; the numbers depend
// on the machine and on what else runs on it, which the report's header
// records (cores, memory, load, free disk).
package databench
