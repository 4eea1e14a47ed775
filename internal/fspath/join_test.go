package fspath_test

import (
	"path"
	"testing"

	"github.com/stratafs/strata/internal/fspath"
)

// TestJoinAsPath: Join is path.Join, on the short way and off it.
func TestJoinAsPath(t *testing.T) {
	for _, dir := range []string{"/", "/a", "/a/b", "/a/", "/a//b", "/a/./b", "/a/../b", ".", "", "a", "a/b"} {
		for _, name := range []string{"x", "part-00001.parquet", "ü", "", ".", "..", "x/y", "/x", "x/"} {
			if got, want := fspath.Join(dir, name), path.Join(dir, name); got != want {
				t.Errorf("Join(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
