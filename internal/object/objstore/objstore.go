// Package objstore opens an object.Store from a URI, the form in which
// namespaces name their backends and flags name buckets:
//
//	file:///abs/dir                     a local directory (localfs)
//	s3://bucket/prefix?endpoint=&region= an S3-compatible bucket (s3)
//	mem://                              a new, empty in-memory store (mem)
//
// It lives apart from package object because it imports every backend, which
// themselves import object. Open returns the bare backend: callers add the
// retry layer (retry.New), once, and any other wrappers they want;
// OpenRetrying and Set do it for servers.
package objstore

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/metered"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/s3"
)

// Open returns the store uri names. It does not contact remote services.
func Open(ctx context.Context, uri string) (object.Store, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	switch u.Scheme {
	case "file":
		dir, err := localDir(u)
		if err != nil {
			return nil, fmt.Errorf("objstore: %q: %w", uri, err)
		}
		return localfs.New(dir)
	case "s3":
		return s3.Open(ctx, uri)
	case "mem":
		if u.Host != "" || u.Path != "" {
			return nil, fmt.Errorf("objstore: %q: mem:// takes no name or path", uri)
		}
		return mem.New(), nil
	}
	return nil, fmt.Errorf("objstore: %q: unknown scheme (want file, s3 or mem)", uri)
}

// WithStorageClass returns the URI of the view of bucket uri that writes
// its objects in storage class class (an s3:// URI with its
// storage_class parameter); a bucket of another kind has no storage
// classes.
func WithStorageClass(uri, class string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("objstore: %w", err)
	}
	if u.Scheme != "s3" {
		return "", fmt.Errorf("objstore: %q has no storage classes (only s3:// buckets do): it cannot keep objects in %s", uri, class)
	}
	q := u.Query()
	q.Set(s3.StorageClassParam, class)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// localDir accepts only file:///absolute/path (or file://localhost/...):
// file://dir/x would silently mean host "dir", not a relative path.
func localDir(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("host %q: want file:///absolute/path", u.Host)
	}
	if u.Opaque != "" || !path.IsAbs(u.Path) || u.RawQuery != "" {
		return "", fmt.Errorf("want file:///absolute/path")
	}
	return u.Path, nil
}

// Set opens each bucket once and hands out the same Store for every later
// request of its URI. Safe for concurrent use.
type Set struct {
	// Open opens a bucket; nil means Open behind the retry layer.
	Open func(ctx context.Context, uri string) (object.Store, error)
	mu   struct {
		sync.Mutex
		stores map[string]object.Store
	}
}

// Get returns the Store of uri, opening it on first use.
func (s *Set) Get(ctx context.Context, uri string) (object.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.mu.stores[uri]; ok {
		return st, nil
	}
	open := s.Open
	if open == nil {
		open = OpenRetrying
	}
	st, err := open(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", uri, err)
	}
	if s.mu.stores == nil {
		s.mu.stores = map[string]object.Store{}
	}
	s.mu.stores[uri] = st
	return st, nil
}

// Defaults of the retry policy of servers' buckets (DefaultPolicy): an
// attempt that moves no byte for StallTimeout is abandoned, and no attempt
// starts RetryBudget after the first (or, for a read, after its last byte).
// A request to a bucket that stopped answering thus fails within about
// RetryBudget + StallTimeout (30 s); one whose body stalls midway within
// StallTimeout more. docs/datapath.md has the reasoning.
const (
	StallTimeout = 10 * time.Second
	RetryBudget  = 20 * time.Second
)

// DefaultPolicy is the retry policy of servers' buckets.
func DefaultPolicy() retry.Policy {
	return retry.Policy{AttemptTimeout: time.Minute, StallTimeout: StallTimeout, MaxElapsed: RetryBudget}
}

// OpenRetrying opens uri behind the retry layer with DefaultPolicy, the way
// servers use buckets.
func OpenRetrying(ctx context.Context, uri string) (object.Store, error) {
	return Retrying(DefaultPolicy())(ctx, uri)
}

// Metered returns an opener of buckets behind the retry layer with p, as
// Retrying, whose every request, and every retry, m hears (a server's
// metrics): the meter sits inside the retry layer, so that each attempt is
// a request.
func Metered(p retry.Policy, m metered.Meter) func(ctx context.Context, uri string) (object.Store, error) {
	onRetry := p.OnRetry
	p.OnRetry = func(op object.Op, key string, attempt int, err error) {
		m.Retry(op, err)
		if onRetry != nil {
			onRetry(op, key, attempt, err)
		}
	}
	return func(ctx context.Context, uri string) (object.Store, error) {
		st, err := Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		return retry.New(metered.New(st, m), p), nil
	}
}

// Retrying returns an opener of buckets behind the retry layer with p.
func Retrying(p retry.Policy) func(ctx context.Context, uri string) (object.Store, error) {
	return func(ctx context.Context, uri string) (object.Store, error) {
		st, err := Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		return retry.New(st, p), nil
	}
}
