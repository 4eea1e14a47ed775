#!/usr/bin/env bash
# Checks for the tools `make test` needs besides Go and make, and installs the
# missing ones with apt-get on Debian when run as root (apt-get update once,
# then apt-get install -y); otherwise it says what to install and fails.
#
#   tool              why                                         Debian package
#   a C compiler      go test -race needs cgo (CC, default gcc)    gcc libc6-dev
#   javac 17 or later the Java client's build (java/)              openjdk-17-jdk-headless
#   mvn 3.8 or later  java/mvn.sh                                  maven
#   unzip             java/test.sh lists the shaded jar            unzip
#   realpath          java/test.sh                                 coreutils
#   Python 3.11+ with venv  the Spark and Python tests' virtual    python3 python3-venv
#                     environments (scripts/spark/venv.sh)
#   python3-config    Python's C headers: the Python package's     python3-dev
#                     extension (python/strata/_fast.c)
#   fusermount3       the FUSE mount's tests (internal/fusefs)     fuse3
#   cargo 1.85+       builds pjdfstest (scripts/pjdfstest)         cargo-web (Debian 12's cargo is 1.63)
#   chromium          the status page's test in a real browser     chromium
#   chromedriver      drives Chromium in that test (WebDriver)     chromium-driver
#   ip                network namespaces for the tests of hosts    iproute2
#                     (internal/testhosts: partitions, containers)
#   nsenter, unshare  runs processes on those hosts                util-linux
#
# Usage: scripts/deps/install.sh (make deps; make test, test-go, test-java and java run it first).
# It uses nothing but bash, id, apt-get and the tools it checks, so that its test can run it
# with stand-ins for them (install_test.go beside it).
set -euo pipefail

say() { echo "deps: $*"; }

packages=() # Debian packages that provide what is missing
missing=()  # what is missing, for the user
found=()    # versions of what is there

need() { missing+=("$1"); shift; packages+=("$@"); }

# version_of CMD ARGS...: the first "N.N..." in what CMD ARGS prints, or nothing.
version_of() {
	local out
	out=$("$@" 2>&1) || return 0
	[[ $out =~ ([0-9]+\.[0-9]+(\.[0-9]+)?) ]] && echo "${BASH_REMATCH[1]}"
	return 0
}

# at_least VERSION MAJOR MINOR: whether VERSION is MAJOR.MINOR or later.
at_least() {
	local major=${1%%.*} rest=${1#*.}
	local minor=${rest%%.*}
	((major > $2 || (major == $2 && minor >= $3)))
}

check_go() {
	if command -v go >/dev/null; then
		found+=("$(go env GOVERSION)")
	else
		missing+=("Go 1.26 (not packaged by Debian 12: see https://go.dev/doc/install)")
	fi
}

check_cc() {
	local cc=gcc
	command -v go >/dev/null && cc=$(go env CC)
	# Compiling a program that includes a libc header checks the headers too.
	if command -v "$cc" >/dev/null &&
		"$cc" -x c -o /dev/null - <<<$'#include <stdlib.h>\nint main(void) { return 0; }' >/dev/null 2>&1; then
		found+=("$cc $(version_of "$cc" -dumpfullversion)")
	else
		need "a C compiler with the C library's headers ($cc, for go test -race)" gcc libc6-dev
	fi
}

check_java() {
	local v=""
	command -v javac >/dev/null && command -v java >/dev/null && v=$(version_of javac -version)
	if [[ -n $v ]] && at_least "$v" 17 0; then
		found+=("javac $v")
	else
		need "a JDK 17 or later (javac${v:+: found $v})" openjdk-17-jdk-headless
	fi
}

check_maven() {
	local v=""
	command -v mvn >/dev/null && v=$(version_of mvn -B -v)
	if [[ -n $v ]] && at_least "$v" 3 8; then
		found+=("Maven $v")
	else
		need "Maven 3.8 or later (mvn${v:+: found $v})" maven
	fi
}

check_python() {
	local v=""
	command -v python3 >/dev/null && v=$(version_of python3 --version)
	if [[ -n $v ]] && at_least "$v" 3 11 && python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
		found+=("Python $v")
	else
		need "Python 3.11 or later with venv (python3${v:+: found $v})" python3 python3-venv
	fi
	if command -v python3-config >/dev/null; then
		found+=("python3-config")
	else
		need "Python's C headers (python3-config, for the Python package's extension)" python3-dev
	fi
}

check_cargo() {
	local v=""
	command -v cargo >/dev/null && v=$(version_of cargo --version)
	if [[ -n $v ]] && at_least "$v" 1 85; then
		found+=("cargo $v")
	else
		need "cargo 1.85 or later (pjdfstest's build${v:+: found $v})" cargo-web
	fi
}

check_tool() { # NAME PACKAGE
	if command -v "$1" >/dev/null; then found+=("$1"); else need "$1" "$2"; fi
}

check_all() {
	packages=() missing=() found=()
	check_go
	check_cc
	check_java
	check_maven
	check_tool unzip unzip
	check_tool realpath coreutils
	check_python
	check_tool fusermount3 fuse3
	check_cargo
	check_tool chromium chromium
	check_tool chromedriver chromium-driver
	check_tool ip iproute2
	if command -v nsenter >/dev/null && command -v unshare >/dev/null; then
		found+=("nsenter unshare")
	else
		need "nsenter and unshare" util-linux
	fi
}

say "checking what make test needs: Go, a C compiler, a JDK 17+, Maven 3.8+, unzip, realpath, Python 3.11+ with venv and its headers, fusermount3, cargo 1.85+, Chromium and its driver, ip, nsenter and unshare"
check_all
if ((${#missing[@]} == 0)); then
	say "all there (${found[*]})"
	exit 0
fi
for m in "${missing[@]}"; do say "missing: $m"; done
if ((${#packages[@]} == 0)); then
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	say "no apt-get here: install them with this system's packages (Debian's: ${packages[*]}), then make test again"
	exit 1
fi
if [[ $(id -u) != 0 ]]; then
	say "install them as root, then make test again:"
	say "  apt-get update && apt-get install -y ${packages[*]}"
	exit 1
fi
say "installing ${packages[*]} with apt-get (a few minutes for a JDK, Maven and Chromium)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -q --no-install-recommends "${packages[@]}"
check_all
if ((${#missing[@]} > 0)); then
	for m in "${missing[@]}"; do say "still missing after apt-get: $m"; done
	exit 1
fi
say "all there now (${found[*]})"
