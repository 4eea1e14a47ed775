package objstore_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/object/s3"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "bucket")
	for _, tc := range []struct {
		uri  string
		want func(object.Store) bool
	}{
		{"file://" + dir, func(s object.Store) bool { l, ok := s.(*localfs.Store); return ok && l.Root() == dir }},
		{"file://localhost" + dir, func(s object.Store) bool { _, ok := s.(*localfs.Store); return ok }},
		{"mem://", func(s object.Store) bool { _, ok := s.(*mem.Store); return ok }},
		{"s3://bucket/prefix?endpoint=http://127.0.0.1:1&region=us-east-1", func(s object.Store) bool { _, ok := s.(*s3.Store); return ok }},
	} {
		s, err := objstore.Open(ctx, tc.uri)
		if err != nil || !tc.want(s) {
			t.Errorf("Open(%q) = %T, %v", tc.uri, s, err)
		}
	}
	// The local store works at once.
	s, _ := objstore.Open(ctx, "file://"+dir)
	if _, err := s.Put(ctx, "k", strings.NewReader("v"), 1); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejects(t *testing.T) {
	for _, uri := range []string{"", "bucket", "file://relative/dir", "file:relative", "mem://name", "gs://b", "s3://"} {
		if s, err := objstore.Open(context.Background(), uri); err == nil {
			t.Errorf("Open(%q) = %T, want an error", uri, s)
		}
	}
}
