package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/metered"
)

// Bucket is the metrics of a process's bucket requests: it is the
// metered.Meter of every bucket the process opens (objstore.Metered), each
// attempt a request, each retry counted apart.
//
//	strata_bucket_requests_total{op}
//	strata_bucket_request_errors_total{op,class}
//	strata_bucket_retries_total{op,class}
//	strata_bucket_request_duration_seconds{op}
type Bucket struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	retries  *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	ops      map[object.Op]bucketOp // every Op, made at the start: read only
}

type bucketOp struct {
	requests prometheus.Counter
	seconds  prometheus.Observer
}

// allOps are the operations of object.Store.
var allOps = []object.Op{object.OpPut, object.OpGet, object.OpHead, object.OpList, object.OpListDir, object.OpDelete,
	object.OpCopy, object.OpCreateMultipart, object.OpUploadPart, object.OpCompleteMultipart, object.OpAbortMultipart,
	object.OpListUploads}

// NewBucket registers the bucket requests' families on reg.
func NewBucket(reg prometheus.Registerer) *Bucket {
	b := &Bucket{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_bucket_requests_total",
			Help: "Requests made to buckets (each attempt one), by operation."}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_bucket_request_errors_total",
			Help: "Bucket requests that failed, by operation and class (not_found, throttled, timeout, transient, changed, invalid, canceled, other)."},
			[]string{"op", "class"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_bucket_retries_total",
			Help: "Bucket requests the retry layer made again, by operation and the class of the failure retried."},
			[]string{"op", "class"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_bucket_request_duration_seconds",
			Help: "Time a bucket took to answer a request (a get: to its first byte).", Buckets: latencyBuckets},
			[]string{"op"}),
		ops: map[object.Op]bucketOp{},
	}
	for _, op := range allOps {
		b.ops[op] = bucketOp{requests: b.requests.WithLabelValues(string(op)), seconds: b.seconds.WithLabelValues(string(op))}
	}
	reg.MustRegister(b.requests, b.errors, b.retries, b.seconds)
	return b
}

var _ metered.Meter = (*Bucket)(nil)

// Request implements metered.Meter.
func (b *Bucket) Request(op object.Op, d time.Duration, err error) {
	s, ok := b.ops[op]
	if !ok {
		s = bucketOp{requests: b.requests.WithLabelValues(string(op)), seconds: b.seconds.WithLabelValues(string(op))}
	}
	s.requests.Inc()
	s.seconds.Observe(d.Seconds())
	if err != nil {
		b.errors.WithLabelValues(string(op), metered.Class(err)).Inc()
	}
}

// Retry implements metered.Meter.
func (b *Bucket) Retry(op object.Op, err error) {
	b.retries.WithLabelValues(string(op), metered.Class(err)).Inc()
}
