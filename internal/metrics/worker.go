package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/worker"
)

// WorkerReport is the collector of a worker's figures, read from its
// Report at each scrape: the bytes it serves by way, its cache's hits,
// misses, evictions and fill, and what goes to and from the bucket.
type WorkerReport struct {
	report func() worker.Report
}

// NewWorkerReport registers the collector of report's figures on reg.
func NewWorkerReport(reg prometheus.Registerer, report func() worker.Report) {
	reg.MustRegister(&WorkerReport{report: report})
}

var (
	readBytes = newDesc("strata_read_bytes_total", "Bytes read through the worker, by way: short_circuit (cache files clients on its host "+
		"read themselves), worker_rpc (sent in Read answers), bucket (fetched from the bucket on a miss).", "way")
	writtenBytes = newDesc("strata_written_bytes_total", "Bytes written through the worker, by way: short_circuit (cache files "+
		"writers on its host filled themselves), bucket (uploaded to the bucket).", "way")
	blocksWritten = newDesc("strata_worker_blocks_written_total", "Blocks the worker wrote to the bucket.")
	scOpens       = newDesc("strata_worker_short_circuit_opens_total", "Short-circuit reads the worker granted.")
	cacheHits     = newDesc("strata_cache_hits_total", "Reads that found their range in the worker's cache.")
	cacheMisses   = newDesc("strata_cache_misses_total", "Reads that fetched some of their range (or waited for a fetch).")
	cacheEvicts   = newDesc("strata_cache_evictions_total", "Blocks evicted from the cache for space.")
	cacheEvicted  = newDesc("strata_cache_evicted_bytes_total", "Bytes evicted from the cache for space.")
	cacheFilled   = newDesc("strata_cache_filled_bytes_total", "Bytes of pages stored in the cache (fetched, written, loaded).")
	cacheCorrupt  = newDesc("strata_cache_corruptions_total", "Cached pages dropped for a bad checksum.")
	cacheWriteErr = newDesc("strata_cache_write_errors_total", "Fetched pages the cache could not store (a full disk, an I/O error).")
	cacheUsed     = newDesc("strata_cache_used_bytes", "Bytes of pages the cache holds.")
	cacheCapacity = newDesc("strata_cache_capacity_bytes", "The cache's capacity, all its directories together.")
	cacheBlocks   = newDesc("strata_cache_blocks", "Blocks with at least one cached page.")
	connsOpen     = newDesc("strata_connections_open", "Connections open on a port.", "port")
	connsRefused  = newDesc("strata_connections_refused_total", "Connections closed as they came, over a cap.", "port")
	connsExpired  = newDesc("strata_connections_expired_total", "Connections closed at their first-call deadline.", "port")
)

// Describe implements prometheus.Collector.
func (c *WorkerReport) Describe(ch chan<- *prometheus.Desc) {
	describeAll(ch, readBytes, writtenBytes, blocksWritten, scOpens, cacheHits, cacheMisses, cacheEvicts, cacheEvicted,
		cacheFilled, cacheCorrupt, cacheWriteErr, cacheUsed, cacheCapacity, cacheBlocks, connsOpen, connsRefused, connsExpired)
}

// Collect implements prometheus.Collector.
func (c *WorkerReport) Collect(ch chan<- prometheus.Metric) {
	r := c.report()
	s, cs := r.Stats, r.Cache
	for _, m := range []prometheus.Metric{
		counter(readBytes, float64(s.GetShortCircuitBytes()), "short_circuit"),
		counter(readBytes, float64(s.GetRpcBytesRead()), "worker_rpc"),
		counter(readBytes, float64(s.GetBucketBytesRead()), "bucket"),
		counter(writtenBytes, float64(s.GetShortCircuitBytesWritten()), "short_circuit"),
		counter(writtenBytes, float64(s.GetBucketBytesWritten()), "bucket"),
		counter(blocksWritten, float64(s.GetBlocksWritten())), counter(scOpens, float64(s.GetShortCircuitOpens())),
		counter(cacheHits, float64(s.GetHits())), counter(cacheMisses, float64(s.GetMisses())),
		counter(cacheEvicts, float64(cs.Evictions)), counter(cacheEvicted, float64(cs.EvictedBytes)),
		counter(cacheFilled, float64(cs.Filled)), counter(cacheCorrupt, float64(cs.Corruptions)),
		counter(cacheWriteErr, float64(s.GetCacheWriteErrors())), gauge(cacheUsed, float64(cs.Used)),
		gauge(cacheCapacity, float64(cs.Capacity)), gauge(cacheBlocks, float64(cs.Blocks)),
	} {
		ch <- m
	}
	collectConns(ch, "worker", r.Port)
	collectConns(ch, "short_circuit", r.Socket)
}

// collectConns sends a port's connection figures.
func collectConns(ch chan<- prometheus.Metric, port string, s connlimit.Stats) {
	ch <- gauge(connsOpen, float64(s.Open), port)
	ch <- counter(connsRefused, float64(s.Refused), port)
	ch <- counter(connsExpired, float64(s.Expired), port)
}

// Conns is the collector of a port's connection figures (the namespace
// service's, the HTTP listener's).
type Conns struct {
	port  string
	stats func() connlimit.Stats
}

// NewConns registers the collector of port's connections on reg.
func NewConns(reg prometheus.Registerer, port string, stats func() connlimit.Stats) {
	reg.MustRegister(&Conns{port: port, stats: stats})
}

// Describe implements prometheus.Collector: unchecked, as the worker's
// collector shares its families.
func (c *Conns) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Conns) Collect(ch chan<- prometheus.Metric) { collectConns(ch, c.port, c.stats()) }
