package throttle_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objtest"
	"github.com/stratafs/strata/internal/object/throttle"
)

func TestConformance(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store {
		link := throttle.NewLink(throttle.Config{Read: 512 << 20, Write: 256 << 20, Latency: 50 * time.Microsecond})
		return throttle.New(mem.New(), link)
	})
}

const (
	rateBPS = 4 << 20
	burst   = 64 << 10
)

// minDuration is the least time moving n bytes through the link can take:
// the limiter starts full, with one burst. Only this lower bound is checked,
// which a slow machine cannot break.
func minDuration(n int) time.Duration {
	return time.Duration(float64(n-burst) / rateBPS * float64(time.Second))
}

func TestReadsShareTheLimit(t *testing.T) {
	inner := mem.New()
	data := objtest.Data(1, 512<<10)
	if _, err := inner.Put(context.Background(), "k", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	s := throttle.New(inner, throttle.NewLink(throttle.Config{Read: rateBPS, Burst: burst}))
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 { // two readers share the one link
		wg.Go(func() {
			rc, err := s.Get(context.Background(), "k", 0, -1)
			if err != nil {
				t.Error(err)
				return
			}
			defer rc.Close()
			if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, data) {
				t.Errorf("read %d bytes, %v", len(got), err)
			}
		})
	}
	wg.Wait()
	if d, want := time.Since(start), minDuration(2*len(data)); d < want {
		t.Fatalf("moved %d bytes in %v, faster than the limit allows (%v)", 2*len(data), d, want)
	}
}

// Versioned reads are paced as reads are, and a Writer's parts as writes.
func TestVersionsAndPartsAreLimited(t *testing.T) {
	ctx := context.Background()
	inner := mem.New()
	data := objtest.Data(1, 512<<10)
	v, err := inner.Put(ctx, "k", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	s := throttle.New(inner, throttle.NewLink(throttle.Config{Total: rateBPS, Burst: burst}))
	start := time.Now()
	rc, err := s.GetVersion(ctx, "k", v.ETag, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) || rc.Info().ETag != v.ETag {
		t.Fatalf("GetVersion read %d bytes, %v, %+v", len(got), err, rc.Info())
	}
	if d, want := time.Since(start), minDuration(len(data)); d < want {
		t.Fatalf("read %d bytes in %v, faster than the limit allows (%v)", len(data), d, want)
	}
	big := objtest.Data(2, object.MinPartSize+(512<<10))
	fast := throttle.New(inner, throttle.NewLink(throttle.Config{Write: 16 * rateBPS, Burst: burst}))
	start = time.Now()
	w := object.NewWriter(ctx, fast, "w", object.WriterOptions{PartSize: object.MinPartSize})
	if _, err := w.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := time.Duration(float64(len(big)-burst) / (16 * rateBPS) * float64(time.Second))
	if d := time.Since(start); d < want {
		t.Fatalf("wrote %d bytes in parts in %v, faster than the limit allows (%v)", len(big), d, want)
	}
}

func TestWritesAreLimited(t *testing.T) {
	s := throttle.New(mem.New(), throttle.NewLink(throttle.Config{Total: rateBPS, Burst: burst}))
	data := objtest.Data(2, 512<<10)
	start := time.Now()
	if _, err := s.Put(context.Background(), "k", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if d, want := time.Since(start), minDuration(len(data)); d < want {
		t.Fatalf("wrote %d bytes in %v, faster than the limit allows (%v)", len(data), d, want)
	}
}

func TestCancelWhileShaped(t *testing.T) {
	s := throttle.New(mem.New(), throttle.NewLink(throttle.Config{Write: 1 << 10, Burst: 1 << 10}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := objtest.Data(3, 64<<10)
	_, err := s.Put(ctx, "k", bytes.NewReader(data), int64(len(data)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context: %v", err)
	}
}

func BenchmarkStore(b *testing.B) {
	link := throttle.NewLink(throttle.Config{Read: throttle.Gbps(10) / 8, Write: throttle.Gbps(10) / 8})
	objtest.Bench(b, throttle.New(mem.New(), link))
}
