package metrics

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/rpcerr"
)

// Calls counts and times the calls a process serves, and logs the slow
// ones: its Unary and Stream are interceptors that a service puts in its
// list of interceptors, inside the translation of errors into statuses, so
// that a failure's class is its fserr condition (rpcerr.Reason).
//
//	strata_rpc_server_handled_total{service,method,transport,class}
//	strata_rpc_server_handling_seconds{service,method}
//
// transport is "grpc" or "callwire" (the same handlers and interceptors
// serve both); class "OK" or the reason a failed call's status names.
type Calls struct {
	handled *prometheus.CounterVec
	seconds *prometheus.HistogramVec
	methods sync.Map // full method name → *method
	Slow    *SlowCalls
}

// method is one method's series, found once.
type method struct {
	service, name string
	seconds       prometheus.Observer
	ok            [2]prometheus.Counter // by transport
}

// The transports a call comes by, as the label says them.
const (
	transportGRPC     = 0
	transportCallwire = 1
)

var transports = [2]string{"grpc", "callwire"}

// NewCalls registers the calls' families on reg. Calls that take slow or
// longer are logged to log and kept in Slow.
func NewCalls(reg prometheus.Registerer, log *slog.Logger, slow time.Duration) *Calls {
	c := &Calls{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_rpc_server_handled_total",
			Help: "Calls served, by method, transport (grpc or callwire) and class (OK, or the failure's reason)."},
			[]string{"service", "method", "transport", "class"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_rpc_server_handling_seconds",
			Help:    "Time from a call's arrival at the service's interceptors to its answer (a stream: to its end).",
			Buckets: latencyBuckets}, []string{"service", "method"}),
		Slow: newSlowCalls(log, slow),
	}
	reg.MustRegister(c.handled, c.seconds)
	return c
}

// method returns the series of fullMethod ("/strata.v1.MetaService/Create").
func (c *Calls) method(fullMethod string) *method {
	if m, ok := c.methods.Load(fullMethod); ok {
		return m.(*method)
	}
	service, name, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	m := &method{service: service, name: name, seconds: c.seconds.WithLabelValues(service, name)}
	for i, t := range transports {
		m.ok[i] = c.handled.WithLabelValues(service, name, t, "OK")
	}
	actual, _ := c.methods.LoadOrStore(fullMethod, m)
	return actual.(*method)
}

// Unary is the interceptor of unary calls.
func (c *Calls) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	c.done(ctx, info.FullMethod, req, start, err)
	return resp, err
}

// Stream is the interceptor of streams.
func (c *Calls) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	c.done(ss.Context(), info.FullMethod, nil, start, err)
	return err
}

// done accounts a call of fullMethod that started at start and failed
// with err (nil: it did not); req is its request, if unary.
func (c *Calls) done(ctx context.Context, fullMethod string, req any, start time.Time, err error) {
	d := time.Since(start)
	m := c.method(fullMethod)
	m.seconds.Observe(d.Seconds())
	t := transportCallwire
	if grpc.ServerTransportStreamFromContext(ctx) != nil { // callwire sets none
		t = transportGRPC
	}
	if err == nil {
		m.ok[t].Inc()
	} else {
		c.handled.WithLabelValues(m.service, m.name, transports[t], rpcerr.Reason(err)).Inc()
	}
	if d >= c.Slow.threshold {
		c.Slow.add(ctx, m.name, req, d, err)
	}
}

// SlowUnary is Unary without the metrics: the slow-call log alone, for a
// process that serves no metrics (--http-listen off).
func (c *Calls) SlowUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	if d := time.Since(start); d >= c.Slow.threshold {
		c.Slow.add(ctx, c.method(info.FullMethod).name, req, d, err)
	}
	return resp, err
}

// SlowStream is Stream without the metrics (SlowUnary).
func (c *Calls) SlowStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	if d := time.Since(start); d >= c.Slow.threshold {
		c.Slow.add(ss.Context(), c.method(info.FullMethod).name, nil, d, err)
	}
	return err
}
