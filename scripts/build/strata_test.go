// Package build tests scripts/build/strata.sh, which builds bin/strata and
// first says what a first build will download and compile.
package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// build runs strata.sh with env added to the test's environment and returns
// its output and whether it succeeded.
func build(t *testing.T, env ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "strata")
	cmd := exec.CommandContext(ctx, "./strata.sh", out)
	cmd.Env = append(os.Environ(), env...)
	text, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("strata.sh did not finish: %v\n%s", ctx.Err(), text)
	}
	return string(text), err == nil
}

// TestFirstBuildSaysItDownloads builds with an empty module cache and no
// module proxy: the script must say that a first build downloads modules
// before go build fails for want of them.
func TestFirstBuildSaysItDownloads(t *testing.T) {
	out, ok := build(t, "GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw", "GOPROXY=off")
	if ok {
		t.Fatalf("the build succeeded without modules or a proxy:\n%s", out)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "the first build downloads its Go modules (about 100 MiB) and compiles them") {
		t.Fatalf("the first line does not say what a first build does: %q\n%s", first, out)
	}
}

// TestLaterBuildSaysLittle builds twice with the test's own caches: the
// first build fills them if need be, and the second says no more than that
// it builds.
func TestLaterBuildSaysLittle(t *testing.T) {
	if out, ok := build(t); !ok {
		t.Fatalf("the build failed:\n%s", out)
	}
	out, ok := build(t)
	if !ok {
		t.Fatalf("the second build failed:\n%s", out)
	}
	if !strings.HasPrefix(out, "building ") || strings.Contains(out, "first build") || strings.Contains(out, "compiling") {
		t.Fatalf("a build with warm caches says more than that it builds:\n%s", out)
	}
}
