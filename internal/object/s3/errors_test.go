package s3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/s3"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
)

// fakeS3 answers every request with status and an S3 error document for code,
// counting requests.
func fakeS3(t *testing.T, status int, code string) (*s3.Store, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>m</Message></Error>`, code)
	}))
	t.Cleanup(srv.Close)
	return storeAt(t, srv.URL), &n
}

func storeAt(t *testing.T, endpoint string) *s3.Store {
	st, err := s3.New(context.Background(), s3.Config{
		Bucket: "b", Endpoint: endpoint, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestErrorTranslation(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code      string
		want      error // nil: none of the sentinels
		retryable bool
	}{
		{503, "SlowDown", object.ErrThrottled, true},
		{429, "TooManyRequests", object.ErrThrottled, true},
		{500, "InternalError", object.ErrTransient, true},
		{400, "RequestTimeout", object.ErrTimeout, true},
		{404, "NoSuchKey", object.ErrNotFound, false},
		{412, "PreconditionFailed", object.ErrChanged, false},
		{404, "NoSuchBucket", nil, false},
		{403, "AccessDenied", nil, false},
	} {
		t.Run(tc.code, func(t *testing.T) {
			st, n := fakeS3(t, tc.status, tc.code)
			_, err := st.Get(context.Background(), "k", 0, -1)
			if err == nil {
				t.Fatal("Get succeeded")
			}
			for _, s := range []error{object.ErrThrottled, object.ErrTransient, object.ErrTimeout, object.ErrNotFound, object.ErrChanged} {
				if errors.Is(err, s) != (s == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, s, !(s == tc.want))
				}
			}
			if object.IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable(%v) = %v", err, !tc.retryable)
			}
			if got := n.Load(); got != 1 {
				t.Errorf("%d requests reached the server; the SDK must not retry", got)
			}
		})
	}
}

// hangUp serves a response cut after 10 of its 100 declared bytes, or no
// response at all, by closing the connection.
func hangUp(t *testing.T, partial bool) *s3.Store {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if partial {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			w.Write(make([]byte, 10))
			w.(http.Flusher).Flush()
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return storeAt(t, srv.URL)
}

func TestConnectionErrorsAreTransient(t *testing.T) {
	_, err := hangUp(t, false).Head(context.Background(), "k")
	if !errors.Is(err, object.ErrTransient) {
		t.Errorf("Head on a dropped connection: %v, want ErrTransient", err)
	}
	rc, err := hangUp(t, true).Get(context.Background(), "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, err = io.ReadAll(rc)
	if !errors.Is(err, object.ErrTransient) || !object.IsRetryable(err) {
		t.Errorf("reading a body cut short: %v, want a retryable ErrTransient", err)
	}
}

func TestParseURI(t *testing.T) {
	cfg, err := s3.ParseURI("s3://bkt/some/prefix?endpoint=http://127.0.0.1:9000&region=eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	want := s3.Config{Bucket: "bkt", Prefix: "some/prefix", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1"}
	if cfg != want {
		t.Fatalf("ParseURI = %+v, want %+v", cfg, want)
	}
	for _, bad := range []string{"s3://", "file:///x", "s3://k:s@bkt/", "s3://bkt/?secret=x"} {
		if _, err := s3.ParseURI(bad); err == nil {
			t.Errorf("ParseURI(%q) succeeded", bad)
		}
	}
}

// With nothing in Config but the bucket, endpoint, region and credentials
// come from the environment, as the SDK's chain has them.
func TestEnvironmentConfig(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.Config(t).Bucket
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", miniotest.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", miniotest.SecretKey)
	st, err := s3.Open(context.Background(), "s3://"+bucket+"/env")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), "k", nil, 0); err != nil {
		t.Fatalf("Put through the environment's config: %v", err)
	}
}
