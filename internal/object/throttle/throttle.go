// Package throttle wraps an object.Store behind an emulated network link: a
// bandwidth limit shared by all requests through the link (per direction
// and/or in total) and a fixed latency before each request, standing for the
// time to first byte. Copies move no bytes over the link (they are
// server-side on S3) and pay the latency only. Benchmarks use it to reproduce a bucket behind a
// 10, 20 or 50 Gb/s link (seed 000), scaled to this machine.
//
// It shapes traffic only: it never fails a request on its own (see faulty)
// and never retries one (see retry).
package throttle

import (
	"context"
	"io"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/stratafs/strata/internal/object"
)

// Config sets a link's limits. Zero means unlimited.
type Config struct {
	Read  float64 // bytes/s of all response bodies (Get, GetVersion) together
	Write float64 // bytes/s of all request bodies (Put, UploadPart) together
	Total float64 // bytes/s of both directions together, on top of Read and Write

	// Latency is added before every request.
	Latency time.Duration
	// Burst is the most bytes one transfer may take at once, and so the
	// granularity of the shaping; default 256 KiB.
	Burst int
}

// Gbps converts gigabits per second to bytes per second, for Config.
func Gbps(g float64) float64 { return g * 1e9 / 8 }

// Link is one emulated link, shared by every store wrapped with it.
type Link struct {
	read, write, total *rate.Limiter
	latency            atomic.Int64 // nanoseconds
	burst              atomic.Int64
}

// NewLink returns a link with c's limits.
func NewLink(c Config) *Link {
	l := &Link{read: rate.NewLimiter(rate.Inf, 0), write: rate.NewLimiter(rate.Inf, 0), total: rate.NewLimiter(rate.Inf, 0)}
	l.Set(c)
	return l
}

// Set changes the link's limits, also for transfers under way.
func (l *Link) Set(c Config) {
	burst := c.Burst
	if burst <= 0 {
		burst = 256 << 10
	}
	l.burst.Store(int64(burst))
	l.latency.Store(int64(c.Latency))
	for lim, r := range map[*rate.Limiter]float64{l.read: c.Read, l.write: c.Write, l.total: c.Total} {
		limit := rate.Limit(r)
		if r <= 0 || math.IsInf(r, 1) {
			limit = rate.Inf
		}
		lim.SetBurst(burst)
		lim.SetLimit(limit)
	}
}

// wait charges n bytes to the direction's limiter and the total one.
func (l *Link) wait(ctx context.Context, dir *rate.Limiter, n int) error {
	for _, lim := range []*rate.Limiter{dir, l.total} {
		// NB: in steps of the current burst, which Set may have lowered
		// since n was read; WaitN refuses more than a burst.
		for left := n; left > 0; {
			step := min(left, max(lim.Burst(), 1))
			if err := lim.WaitN(ctx, step); err != nil {
				return err
			}
			left -= step
		}
	}
	return nil
}

// delay waits out the link's latency.
func (l *Link) delay(ctx context.Context) error {
	return object.Sleep(ctx, time.Duration(l.latency.Load()))
}

// shaped paces the bytes read through it on the link, in steps of at most
// the link's burst.
type shaped struct {
	ctx  context.Context
	link *Link
	dir  *rate.Limiter
	r    io.Reader
}

func (s *shaped) Read(p []byte) (int, error) {
	if b := int(s.link.burst.Load()); len(p) > b {
		p = p[:b]
	}
	n, err := s.r.Read(p)
	if n > 0 {
		if werr := s.link.wait(s.ctx, s.dir, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// ShapeRead returns r with its bytes paced on the link as a store's
// responses are (the Read and Total limits): for a TCP proxy that puts the
// link between a store and clients this package does not wrap, so that
// they share its bandwidth (bench/linkproxy).
func (l *Link) ShapeRead(ctx context.Context, r io.Reader) io.Reader {
	return &shaped{ctx: ctx, link: l, dir: l.read, r: r}
}

// ShapeWrite is ShapeRead for requests' bytes (the Write and Total limits).
func (l *Link) ShapeWrite(ctx context.Context, r io.Reader) io.Reader {
	return &shaped{ctx: ctx, link: l, dir: l.write, r: r}
}

// New wraps inner behind link.
func New(inner object.Store, link *Link) object.Store {
	return &store{inner: inner, link: link}
}
