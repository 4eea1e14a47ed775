package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/retry"
)

// stallingS3 is a real HTTP server that behaves as a hung S3 (MinIO under
// SIGSTOP): a GET gets its headers and the first half of its body, then
// nothing more; a PUT has its body left unread and gets no answer; other
// requests get no answer. Each handler waits until the client gives up (its
// connection closes) or the test ends.
type stallingS3 struct {
	gets, puts, others atomic.Int64
	release            chan struct{} // closed when the test ends
}

const stallBodySize = 1 << 20

func (s *stallingS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		n := s.gets.Add(1)
		body := bytes.Repeat([]byte{'x'}, stallBodySize)
		from := int64(0) // a resumed read asks for the rest
		if rg := r.Header.Get("Range"); rg != "" {
			if _, err := fmt.Sscanf(rg, "bytes=%d-", &from); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", strconv.Itoa(stallBodySize-int(from)))
		w.WriteHeader(http.StatusOK)
		if n == 1 { // the first answer sends half, the others nothing
			_, _ = w.Write(body[from : stallBodySize/2])
		}
		w.(http.Flusher).Flush()
	case http.MethodPut:
		s.puts.Add(1)
	default:
		s.others.Add(1)
	}
	// NB: a server notices a closed connection only once it has read the
	// request body, which a PUT's handler leaves unread: hence release.
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

// The retry layer abandons attempts that stall, retries them, and gives up
// with a retryable timeout (the unavailable class, to a worker) once its
// budget is spent: it never waits for a hung store forever.
func TestStalledRequestsAreAbandoned(t *testing.T) {
	fake := &stallingS3{release: make(chan struct{})}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(fake.release) })
	p := retry.Policy{MaxAttempts: 100, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond,
		StallTimeout: 200 * time.Millisecond, MaxElapsed: time.Second}
	st := retry.New(storeAt(t, srv.URL), p)
	// A safeguard only: without stall detection every call below hangs
	// until this deadline, and the checks then fail on its error.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	rc, err := st.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, object.ErrTimeout) || !object.IsRetryable(err) || ctx.Err() != nil {
		t.Fatalf("reading a body that stalls: %v, want a retryable ErrTimeout", err)
	}
	if len(got) != stallBodySize/2 || fake.gets.Load() < 3 {
		t.Fatalf("read %d bytes in %d GETs; want the %d sent, and the rest asked for again", len(got), fake.gets.Load(), stallBodySize/2)
	}

	// The attempts are counted by the retry layer, which says how many it
	// made: an attempt abandoned on a loaded machine before the server's
	// handler ran is one the server never counts.
	p.MaxAttempts, p.MaxElapsed = 3, time.Minute
	st = retry.New(storeAt(t, srv.URL), p)
	const gaveUp = "gave up after 3 attempts"
	body := bytes.Repeat([]byte{'y'}, 32<<20) // more than the socket buffers hold
	_, err = st.Put(ctx, "k", bytes.NewReader(body), int64(len(body)))
	if !errors.Is(err, object.ErrTimeout) || ctx.Err() != nil || !strings.Contains(err.Error(), gaveUp) || fake.puts.Load() < 1 {
		t.Fatalf("Put to a store that stopped reading: %v (%d PUTs reached it), want ErrTimeout, %s", err, fake.puts.Load(), gaveUp)
	}

	if _, err := st.Head(ctx, "k"); !errors.Is(err, object.ErrTimeout) || ctx.Err() != nil || !strings.Contains(err.Error(), gaveUp) || fake.others.Load() < 1 {
		t.Fatalf("Head of a store that does not answer: %v (%d requests reached it), want ErrTimeout, %s", err, fake.others.Load(), gaveUp)
	}
}
