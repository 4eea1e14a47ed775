package s3_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/objtest"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/s3"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
)

func TestConformance(t *testing.T) {
	srv := miniotest.Start(t)
	objtest.Run(t, func(t *testing.T) object.Store { return srv.NewStore(t) }, objtest.UploadsByKeyOnly())
}

// A prefixed store sees only its own keys, without the prefix.
func TestConformancePrefixed(t *testing.T) {
	srv := miniotest.Start(t)
	objtest.Run(t, func(t *testing.T) object.Store {
		cfg := srv.Config(t)
		cfg.Prefix = "some/prefix"
		st, err := s3.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}, objtest.UploadsByKeyOnly())
}

func BenchmarkMinIO(b *testing.B) {
	objtest.Bench(b, miniotest.Start(b).NewStore(b))
}

// The suite passes against MinIO through the retry layer while faults strike
// a fifth of the calls.
func TestConformanceUnderFaults(t *testing.T) {
	srv := miniotest.Start(t)
	policy := retry.Policy{MaxAttempts: 30, BaseDelay: 100 * time.Microsecond, MaxDelay: 5 * time.Millisecond}
	var fired atomic.Int64
	objtest.Run(t, func(t *testing.T) object.Store {
		in := faulty.NewInjector(7)
		in.Set(faulty.Mix(0.2)...)
		t.Cleanup(func() { fired.Add(in.Fired()) })
		return retry.New(faulty.New(srv.NewStore(t), in), policy)
	}, objtest.UploadsByKeyOnly())
	if fired.Load() < 50 {
		t.Errorf("only %d faults injected: too mild a storm to prove anything", fired.Load())
	}
}
