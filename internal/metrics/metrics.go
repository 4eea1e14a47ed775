// Package metrics is Strata's Prometheus side: the metric families every
// process serves on /metrics, made from what each part tells through the
// narrow hooks it owns. The namespace service's member reports its events
// through metaserver.Observer and its state through metaserver.Report;
// the worker through worker.Report; the buckets through metered.Meter;
// every RPC through the interceptors of Calls, which the services put in
// their one list of interceptors, so that gRPC and callwire calls count
// alike. Nothing else in Strata imports the Prometheus library.
//
// Names and labels follow Prometheus' conventions (a strata_ prefix, base
// units, _total counters), and no label is unbounded: methods, operations,
// error classes, namespaces and member ids are sets the cluster's
// configuration bounds; no path, user, key or trace id is a label (the
// slow-call log names those). docs/operations.md lists the families.
//
// It is not the status page (internal/statuspage serves both), nor a log:
// Calls logs only the slow calls.
package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with the Go runtime's and the process's
// own families (memory, goroutines, CPU, open files), to which the parts'
// are added.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg's families in Prometheus' text format (or its
// protobuf one, as the scraper asks). A scrape gathers what the parts
// report, which reads their state: at most a few at once, each bounded in
// time.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
}

// latencyBuckets are the buckets of the latency histograms, in seconds:
// from 50 µs (a read of a hot inode) to 10 s (a bucket that stalls).
var latencyBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

// gauge is a constant gauge of desc with value v and labels.
func gauge(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}

// counter is a constant counter of desc with value v and labels.
func counter(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
}

// describeAll sends descs: a collector's Describe.
func describeAll(ch chan<- *prometheus.Desc, descs ...*prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Process is what every server process has: its registry, the metrics of
// the calls it serves (and its slow-call log), and the meter of its
// buckets, which its parts (a member, a worker, both in the dev server)
// share.
type Process struct {
	Registry *prometheus.Registry
	Calls    *Calls
	Bucket   *Bucket
}

// NewProcess returns a process's metrics; calls that take slow or longer
// are logged to log.
func NewProcess(log *slog.Logger, slow time.Duration) *Process {
	reg := NewRegistry()
	return &Process{Registry: reg, Calls: NewCalls(reg, log, slow), Bucket: NewBucket(reg)}
}
