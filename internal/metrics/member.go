package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/rpcerr"
)

// Member is a namespace service member's metrics: it hears the member's
// events (it is the member's metaserver.Observer) and, at each scrape,
// reads its Report (collector.go's MemberCollector).
type Member struct {
	ops           *prometheus.CounterVec
	opSeconds     *prometheus.HistogramVec
	opSeries      sync.Map // operation name → *opSeries
	entries       prometheus.Counter
	commands      prometheus.Histogram
	applied       prometheus.Histogram
	leaderChanges prometheus.Counter
	snapshots     *prometheus.CounterVec
	snapSeconds   *prometheus.HistogramVec
	snapBytes     *prometheus.HistogramVec
}

type opSeries struct {
	seconds prometheus.Observer
	ok      prometheus.Counter
}

// NewMember registers a member's event families on reg.
func NewMember(reg prometheus.Registerer) *Member {
	m := &Member{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_meta_ops_total",
			Help: "Operations of the namespace service's table carried out, alone or in a batch, by class (OK, or the failure's reason)."},
			[]string{"op", "class"}),
		opSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_meta_op_duration_seconds",
			Help: "Time the service took to answer an operation (in a batch: the batch's time to its answer).", Buckets: latencyBuckets},
			[]string{"op"}),
		entries: prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_raft_proposals_total",
			Help: "Log entries this member proposed (as leader); each carries one command or a group of them."}),
		commands: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strata_raft_proposal_commands",
			Help: "Commands per proposed log entry.", Buckets: prometheus.ExponentialBuckets(1, 2, 10)}),
		applied: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strata_raft_apply_batch_entries",
			Help: "Committed log entries applied per batch (one pebble commit).", Buckets: prometheus.ExponentialBuckets(1, 2, 10)}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_raft_leader_changes_total",
			Help: "Changes of the leader this member knows of (an election, a transfer, a leader lost)."}),
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_raft_snapshots_total",
			Help: "Snapshots sent to other members or received and restored, by kind and result (ok or error)."},
			[]string{"kind", "result"}),
		snapSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_raft_snapshot_duration_seconds",
			Help:    "Time to send a snapshot (checkpoint and stream) or to restore a received one.",
			Buckets: prometheus.ExponentialBuckets(.01, 4, 8)}, []string{"kind"}),
		snapBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_raft_snapshot_bytes",
			Help: "Size of the snapshots sent or restored.", Buckets: prometheus.ExponentialBuckets(1<<16, 4, 10)},
			[]string{"kind"}),
	}
	reg.MustRegister(m.ops, m.opSeconds, m.entries, m.commands, m.applied, m.leaderChanges, m.snapshots,
		m.snapSeconds, m.snapBytes)
	return m
}

var _ metaserver.Observer = (*Member)(nil)

func (m *Member) series(op string) *opSeries {
	if s, ok := m.opSeries.Load(op); ok {
		return s.(*opSeries)
	}
	s := &opSeries{seconds: m.opSeconds.WithLabelValues(op), ok: m.ops.WithLabelValues(op, "OK")}
	actual, _ := m.opSeries.LoadOrStore(op, s)
	return actual.(*opSeries)
}

// Op implements metaserver.Observer.
func (m *Member) Op(name string, d time.Duration, err error) {
	s := m.series(name)
	s.seconds.Observe(d.Seconds())
	if err == nil {
		s.ok.Inc()
		return
	}
	m.ops.WithLabelValues(name, rpcerr.Reason(err)).Inc()
}

// Proposed implements metaserver.Observer.
func (m *Member) Proposed(commands int) {
	m.entries.Inc()
	m.commands.Observe(float64(commands))
}

// Applied implements metaserver.Observer.
func (m *Member) Applied(entries int) { m.applied.Observe(float64(entries)) }

// LeaderChanged implements metaserver.Observer.
func (m *Member) LeaderChanged(uint64, bool) { m.leaderChanges.Inc() }

// Snapshot implements metaserver.Observer.
func (m *Member) Snapshot(kind string, bytes int64, d time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.snapshots.WithLabelValues(kind, result).Inc()
	m.snapSeconds.WithLabelValues(kind).Observe(d.Seconds())
	m.snapBytes.WithLabelValues(kind).Observe(float64(bytes))
}

// memberLabel is a member id as a label value.
func memberLabel(id uint64) string { return strconv.FormatUint(id, 10) }
