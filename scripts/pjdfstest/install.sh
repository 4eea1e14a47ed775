#!/usr/bin/env bash
# Installs pjdfstest, the POSIX file system test suite (the Rust rewrite of
# pjd's suite, from crates.io) that the mount's conformance test runs
# (internal/fusefs TestPOSIXConformance; docs/fuse.md lists every case it
# excludes, with the reason).
#
# It is built from its crate at one pinned version with cargo (1.85 or
# later: Debian 12's cargo-web, which scripts/deps installs) into a
# project-local bin dir; about 3 minutes on 2 cores the first time, a no-op
# afterwards.
#
# Usage: scripts/pjdfstest/install.sh
#   env STRATA_BIN overrides the bin dir (then point STRATA_PJDFSTEST at $STRATA_BIN/pjdfstest).
set -euo pipefail

readonly VERSION="0.2.2"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin_dir="${STRATA_BIN:-$repo/.cache/bin}"
bin="$bin_dir/pjdfstest"
stamp="$bin_dir/.pjdfstest.version"

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$VERSION" ]]; then
	echo "pjdfstest $VERSION already installed at $bin"
	exit 0
fi
if ! command -v cargo >/dev/null; then
	echo "pjdfstest: no cargo: install cargo 1.85 or later (Debian 12: apt-get install cargo-web, which make deps does; its cargo package is 1.63, too old), then make test again" >&2
	exit 1
fi
mkdir -p "$bin_dir"
[[ -f "$repo/.cache/.gitignore" ]] || { mkdir -p "$repo/.cache" && echo '*' >"$repo/.cache/.gitignore"; }

echo "building pjdfstest $VERSION from crates.io into $bin_dir (about 3 minutes on 2 cores)..."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo install --locked --quiet pjdfstest --version "$VERSION" --root "$work"
install -m 0755 "$work/bin/pjdfstest" "$bin"
# NB: the stamp is written only after a successful build, so an interrupted
# build is retried rather than trusted.
echo "$VERSION" >"$stamp"
echo "pjdfstest installed at $bin"
