package fusefs_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestPOSIXConformance runs pjdfstest (the Rust rewrite of pjd's POSIX
// suite, built from crates.io by scripts/pjdfstest/install.sh) in a mount,
// as root, switching to the users nobody and daemon for the permission
// cases: a service with --insecure-no-auth and a mount with
// --insecure-callers, so that each caller's uid is the user the service
// checks. Every case that fails must be one docs/fuse.md excludes, with
// its reason ("Appendix: POSIX conformance exclusions"), and every case it
// excludes must still fail: the list says exactly what does not conform.
func TestPOSIXConformance(t *testing.T) {
	bin := pjdfstestBinary(t)
	excluded := readExclusions(t)
	srv := devServer(t, "--insecure-no-auth")
	m := mount(t, srv.Addr, "default", "--insecure-callers")
	// The users the cases switch to must reach the mount: t.TempDir's
	// directories are its owner's alone.
	for _, d := range []string{filepath.Dir(m.Dir), m.Dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := m.path("pjd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "pjdfstest.toml")
	if err := os.WriteFile(cfg, []byte(pjdConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-c", cfg, "-p", dir)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput() // failures are judged case by case below
	results := parsePJD(out)
	if len(results) < 300 {
		t.Fatalf("pjdfstest ran %d cases, fewer than it has:\n%s", len(results), tail(out, 4000))
	}
	counts := map[string]int{}
	for name, res := range results {
		counts[res]++
		_, isExcluded := excluded[name]
		switch {
		case res == "FAILED" && !isExcluded:
			t.Errorf("%s failed, and docs/fuse.md does not exclude it", name)
		case res == "ok" && isExcluded:
			t.Errorf("%s passes now: remove it from docs/fuse.md's exclusions", name)
		}
	}
	for name := range excluded {
		if _, ran := results[name]; !ran {
			t.Errorf("docs/fuse.md excludes %s, which pjdfstest did not run", name)
		}
	}
	t.Logf("pjdfstest: %d passed, %d failed (all excluded, %d reasons), %d skipped by pjdfstest itself",
		counts["ok"], counts["FAILED"], len(reasonsOf(excluded)), counts["skipped"])
}

// pjdConfig: the users the permission cases switch to (Debian has both).
const pjdConfig = `[features]
[settings]
naptime = 0.01
allow_remount = false
[dummy_auth]
entries = [["nobody", "nogroup"], ["daemon", "daemon"]]
`

func pjdfstestBinary(t *testing.T) string {
	t.Helper()
	path := os.Getenv("STRATA_PJDFSTEST")
	if path == "" {
		path = filepath.Join(repoRoot(t), ".cache", "bin", "pjdfstest")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no pjdfstest at %s: run scripts/pjdfstest/install.sh (make test does), or set STRATA_PJDFSTEST", path)
	}
	return path
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

var pjdLine = regexp.MustCompile(`^(\S+::\S+)\s+(ok|FAILED|skipped)\s*$`)

// parsePJD returns each case's result from pjdfstest's output.
func parsePJD(out []byte) map[string]string {
	res := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if m := pjdLine.FindStringSubmatch(sc.Text()); m != nil {
			res[m[1]] = m[2]
		}
	}
	return res
}

// readExclusions reads docs/fuse.md's appendix: under each "### reason"
// heading, one "- `case`" line per case.
func readExclusions(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "fuse.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, appendix, ok := strings.Cut(string(b), "## Appendix: POSIX conformance exclusions")
	if !ok {
		t.Fatal("docs/fuse.md has no appendix of exclusions")
	}
	out, reason := map[string]string{}, ""
	for _, line := range strings.Split(appendix, "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			reason = strings.TrimPrefix(line, "### ")
		case strings.HasPrefix(line, "- `") && reason != "":
			out[strings.Trim(strings.TrimPrefix(line, "- "), "`")] = reason
		}
	}
	return out
}

func reasonsOf(ex map[string]string) []string {
	set := map[string]bool{}
	for _, r := range ex {
		set[r] = true
	}
	var out []string
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
