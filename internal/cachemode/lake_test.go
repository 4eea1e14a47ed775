package cachemode_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/s3"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// lake is a cache-mode namespace "lake" over a bucket that the test also
// reaches directly, as another S3 client would: a namespace service with a
// clock the test moves, and one worker, both in the test's process, over
// a local directory or a real MinIO.
type lake struct {
	svc      *testcluster.InProcess
	w        *worker.Worker
	cacheDir string
	bucket   object.Store // the namespace's bucket, seen directly
	c        *client.Client
	clock    *clock
}

// clock is the namespace service's: real time plus what the test added.
type clock struct {
	mu    sync.Mutex
	extra time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.extra)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.extra += d
}

// backends are the buckets every lake test runs against.
var backends = []string{"localfs", "minio"}

// eachBackend runs fn as a subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

type lakeOptions struct {
	interval  int64                           // the namespace's sync interval
	blockSize uint64                          // the service's block size; 0: its default
	wrap      func(object.Store) object.Store // faults between the worker and the bucket
	// wrapService, faults between the namespace service and the bucket.
	wrapService func(object.Store) object.Store
	log         *slog.Logger // the namespace service's; nil: its default
}

func startLake(t *testing.T, backend string, o lakeOptions) *lake {
	t.Helper()
	l := &lake{clock: &clock{}, cacheDir: t.TempDir()}
	var uri string
	switch backend {
	case "localfs":
		dir := t.TempDir()
		uri = "file://" + dir
		st, err := localfs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		l.bucket = st
	case "minio":
		cfg := miniotest.Start(t).Config(t)
		cfg.Prefix = "lake"
		st, err := s3.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		l.bucket = st
		t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretAccessKey)
		uri = fmt.Sprintf("s3://%s/lake?endpoint=%s&region=%s", cfg.Bucket, url.QueryEscape(cfg.Endpoint), cfg.Region)
	default:
		t.Fatalf("no backend %q", backend)
	}
	l.svc = testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = l.clock.now
		if o.log != nil {
			cfg.Log = o.log
		}
		if o.blockSize != 0 {
			cfg.Namespace.BlockSize = o.blockSize
		}
		if o.wrapService != nil {
			cfg.OpenStore = func(ctx context.Context, uri string) (object.Store, error) {
				st, err := objstore.Open(ctx, uri)
				if err != nil {
					return nil, err
				}
				return retry.New(o.wrapService(st), retry.Policy{}), nil
			}
		}
	})
	wcfg := worker.Config{StateDir: t.TempDir(), Meta: l.svc.Addr,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: l.cacheDir, Capacity: 512 << 20}}}}
	wcfg.OpenStore = func(ctx context.Context, uri string) (object.Store, error) {
		st, err := objstore.Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		if o.wrap != nil {
			st = o.wrap(st)
		}
		return retry.New(st, retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond,
			AttemptTimeout: 5 * time.Second, MaxAttempts: 20}), nil
	}
	l.w = testcluster.ServeWorker(t, wcfg)
	l.c = testcluster.Client(t, l.svc.Addr, "")
	if err := l.c.CreateNamespace(context.Background(), &pb.NamespaceInfo{Name: "lake",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_CACHE, StoreUri: uri, SyncInterval: o.interval}); err != nil {
		t.Fatal(err)
	}
	return l
}

// put puts an object straight into the bucket, as another client would.
func (l *lake) put(t *testing.T, key string, data []byte) object.Info {
	t.Helper()
	info, err := l.bucket.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// object reads an object straight from the bucket.
func (l *lake) object(t *testing.T, key string) []byte {
	t.Helper()
	r, err := l.bucket.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read reads a file of the lake through Strata.
func (l *lake) read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := l.c.ReadFile(context.Background(), "strata://lake"+path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// names lists a directory of the lake through Strata.
func (l *lake) names(t *testing.T, path string) []string {
	t.Helper()
	list, err := l.c.ReadDir(context.Background(), "strata://lake"+path)
	if err != nil {
		t.Fatalf("list %s: %v", path, err)
	}
	var out []string
	for _, st := range list {
		name := st.Name
		if st.IsDir {
			name += "/"
		}
		out = append(out, name)
	}
	return out
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sum(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
