// Package deps tests scripts/deps/install.sh, the check (and, on Debian as
// root, the install) of what make test needs. The script runs for real, with
// a PATH that holds only bash and stand-ins for the tools it checks, id and
// apt-get; the stand-in apt-get records its arguments and "installs" a
// package by adding its commands' stand-ins to that PATH.
package deps

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tools are stand-ins for the commands the script checks, as Debian 12's
// packages install them, by package.
var tools = map[string]map[string]string{
	"gcc":                     {"gcc": `[ "$1" = -dumpfullversion ] && echo 12.2.0; cat >/dev/null; exit 0`},
	"libc6-dev":               {},
	"openjdk-17-jdk-headless": {"javac": `echo "javac 17.0.15"`, "java": `echo 'openjdk version "17.0.15"' >&2`},
	"maven":                   {"mvn": `echo "Apache Maven 3.8.7 (Debian)"`},
	"unzip":                   {"unzip": `exit 0`},
	"coreutils":               {"realpath": `exit 0`},
	"python3":                 {"python3": `[ "$1" = --version ] && echo "Python 3.11.2"; exit 0`},
	"python3-venv":            {},
	"python3-dev":             {"python3-config": `exit 0`},
	"fuse3":                   {"fusermount3": `exit 0`},
	"cargo-web":               {"cargo": `echo "cargo 1.96.0 (Debian)"`},
	"chromium":                {"chromium": `exit 0`},
	"chromium-driver":         {"chromedriver": `exit 0`},
	"iproute2":                {"ip": `exit 0`},
	"util-linux":              {"nsenter": `exit 0`, "unshare": `exit 0`},
}

// machine is a PATH for the script: bash, go, id, and what tests add.
type machine struct {
	t   *testing.T
	bin string // the only directory on PATH
	log string // apt-get's calls, one a line
}

func newMachine(t *testing.T, uid int, apt bool) *machine {
	t.Helper()
	m := &machine{t: t, bin: t.TempDir(), log: filepath.Join(t.TempDir(), "apt-get.log")}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bash, filepath.Join(m.bin, "bash")); err != nil {
		t.Fatal(err)
	}
	m.add("go", `case "$2" in GOVERSION) echo go1.26.8;; CC) echo gcc;; esac`)
	m.add("id", fmt.Sprintf(`echo %d`, uid))
	if apt {
		repo := t.TempDir()
		for pkg, cmds := range tools {
			dir := filepath.Join(repo, pkg)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range cmds {
				writeScript(t, filepath.Join(dir, name), body)
			}
		}
		// Installs each package named after the options by copying its commands.
		m.add("apt-get", fmt.Sprintf(`echo "$*" >>%q
[ "$1" = install ] || exit 0
for a in "$@"; do
  case $a in -*|install) ;; *) /bin/cp -r %q/"$a"/. %q/ || exit 100;; esac
done`, m.log, repo, m.bin))
	}
	return m
}

// install puts pkg's commands on the machine's PATH.
func (m *machine) install(pkgs ...string) {
	for _, pkg := range pkgs {
		for name, body := range tools[pkg] {
			m.add(name, body)
		}
	}
}

func (m *machine) add(name, body string) { writeScript(m.t, filepath.Join(m.bin, name), body) }

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// run runs the script and returns its exit code, its output, and apt-get's
// calls.
func (m *machine) run() (int, string, string) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./install.sh")
	cmd.Env = []string{"PATH=" + m.bin, "HOME=" + m.t.TempDir()}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok || ctx.Err() != nil {
			m.t.Fatalf("install.sh: %v (%v)\n%s", err, ctx.Err(), out)
		}
		code = ee.ExitCode()
	}
	calls, err := os.ReadFile(m.log)
	if err != nil && !os.IsNotExist(err) {
		m.t.Fatal(err)
	}
	return code, string(out), string(calls)
}

var all = []string{"gcc", "libc6-dev", "openjdk-17-jdk-headless", "maven", "unzip", "coreutils", "python3",
	"python3-venv", "python3-dev", "fuse3", "cargo-web", "chromium", "chromium-driver", "iproute2", "util-linux"}

func TestAllThere(t *testing.T) {
	m := newMachine(t, 0, true)
	m.install(all...)
	code, out, calls := m.run()
	if code != 0 || calls != "" {
		t.Fatalf("exit %d, apt-get calls %q; want 0 and none\n%s", code, calls, out)
	}
	want := "deps: all there (go1.26.8 gcc 12.2.0 javac 17.0.15 Maven 3.8.7 unzip realpath Python 3.11.2 python3-config fusermount3 cargo 1.96.0 chromium chromedriver ip nsenter unshare)"
	if !strings.Contains(out, want) {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
}

func TestRootInstallsWhatIsMissing(t *testing.T) {
	m := newMachine(t, 0, true)
	m.install("coreutils")
	code, out, calls := m.run()
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	want := "update -qq\ninstall -y -q --no-install-recommends gcc libc6-dev openjdk-17-jdk-headless maven unzip " +
		"python3 python3-venv python3-dev fuse3 cargo-web chromium chromium-driver iproute2 util-linux\n"
	if calls != want {
		t.Fatalf("apt-get calls:\n%s\nwant:\n%s\noutput:\n%s", calls, want, out)
	}
	for _, w := range []string{
		"deps: missing: Maven 3.8 or later (mvn)",
		"deps: missing: unzip",
		"deps: missing: fusermount3",
		"deps: missing: Python's C headers (python3-config, for the Python package's extension)",
		"deps: installing gcc libc6-dev openjdk-17-jdk-headless maven unzip python3 python3-venv python3-dev fuse3 cargo-web chromium chromium-driver iproute2 util-linux with apt-get",
		"deps: all there now (go1.26.8 gcc 12.2.0 javac 17.0.15 Maven 3.8.7 unzip realpath Python 3.11.2 python3-config fusermount3 cargo 1.96.0 chromium chromedriver ip nsenter unshare)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// TestOldVersionIsMissing: a tool too old is missing, and its package
// installed. The stand-in's package replaces the old tool, as
// update-alternatives does for a newer JDK, and as Debian 12's cargo-web
// (1.96) does its cargo (1.63, too old to build pjdfstest).
func TestOldVersionIsMissing(t *testing.T) {
	for _, c := range []struct{ tool, old, pkg, want string }{
		{"javac", "javac 11.0.25", "openjdk-17-jdk-headless", "a JDK 17 or later (javac: found 11.0.25)"},
		{"cargo", "cargo 1.63.0", "cargo-web", "cargo 1.85 or later (pjdfstest's build: found 1.63.0)"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			m := newMachine(t, 0, true)
			m.install(all...)
			m.add(c.tool, fmt.Sprintf("echo %q", c.old))
			code, out, calls := m.run()
			if code != 0 || calls != "update -qq\ninstall -y -q --no-install-recommends "+c.pkg+"\n" {
				t.Fatalf("exit %d, apt-get calls %q\n%s", code, calls, out)
			}
			if w := "deps: missing: " + c.want; !strings.Contains(out, w) {
				t.Fatalf("output lacks %q:\n%s", w, out)
			}
		})
	}
}

func TestNotRootSaysWhatToInstall(t *testing.T) {
	m := newMachine(t, 1000, true)
	m.install(all...)
	if err := os.Remove(filepath.Join(m.bin, "mvn")); err != nil {
		t.Fatal(err)
	}
	code, out, calls := m.run()
	if code == 0 || calls != "" {
		t.Fatalf("exit %d, apt-get calls %q; want a failure and none\n%s", code, calls, out)
	}
	if w := "deps:   apt-get update && apt-get install -y maven\n"; !strings.Contains(out, w) {
		t.Fatalf("output lacks %q:\n%s", w, out)
	}
}

func TestNoAptGetSaysWhatToInstall(t *testing.T) {
	m := newMachine(t, 0, false)
	m.install("gcc", "libc6-dev", "openjdk-17-jdk-headless", "maven", "coreutils", "python3", "python3-dev", "fuse3", "cargo-web", "chromium", "chromium-driver", "iproute2", "util-linux")
	code, out, _ := m.run()
	if code == 0 {
		t.Fatalf("exit 0 without unzip\n%s", out)
	}
	for _, w := range []string{"deps: missing: unzip\n", "deps: no apt-get here: install them with this system's packages (Debian's: unzip)"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestStillMissingAfterAptGetFails(t *testing.T) {
	m := newMachine(t, 0, true)
	m.install(all...)
	// Go builds cgo with clang here, which Debian's gcc does not bring.
	m.add("go", `case "$2" in GOVERSION) echo go1.26.8;; CC) echo clang;; esac`)
	code, out, calls := m.run()
	if code == 0 || calls != "update -qq\ninstall -y -q --no-install-recommends gcc libc6-dev\n" {
		t.Fatalf("exit %d, apt-get calls %q; want a failure after installing gcc libc6-dev\n%s", code, calls, out)
	}
	if w := "deps: still missing after apt-get: a C compiler with the C library's headers (clang, for go test -race)"; !strings.Contains(out, w) {
		t.Fatalf("output lacks %q:\n%s", w, out)
	}
}
