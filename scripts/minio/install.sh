#!/usr/bin/env bash
# Installs the MinIO server used as the S3-compatible store in Strata's tests.
#
# MinIO is built from source with `go install` at one pinned version (the
# upstream repository is archived, so it is a test fixture only) into a
# project-local bin dir, so tests find it without touching the system. On a
# 2-core machine a first build takes up to 10 minutes (about 250 MiB of modules
# to download, then compile; measured 9m43s on a busy machine, Go's caches
# empty); a second run is a no-op.
#
# Usage: scripts/minio/install.sh
#   env STRATA_BIN overrides the bin dir (then point STRATA_MINIO at $STRATA_BIN/minio).
# Afterwards: $REPO/.cache/bin/minio, or set STRATA_MINIO to another binary.
set -euo pipefail

readonly VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
readonly MODULE="github.com/minio/minio"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin_dir="${STRATA_BIN:-$repo/.cache/bin}"
bin="$bin_dir/minio"
stamp="$bin_dir/.minio.version"

# NB: the stamp is written only after a successful build, so an interrupted
# build is retried rather than trusted.
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$VERSION" ]]; then
	echo "minio $VERSION already installed at $bin"
	exit 0
fi

mkdir -p "$bin_dir"
# Keep build products out of git without touching the repo's .gitignore.
[[ -f "$repo/.cache/.gitignore" ]] || { mkdir -p "$repo/.cache" && echo '*' >"$repo/.cache/.gitignore"; }

echo "building minio $VERSION into $bin_dir (up to 10 minutes on 2 cores, about 250 MiB of Go modules to download first)..."
# Build outside the repo so Strata's go.mod neither constrains nor records it.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
GOBIN="$bin_dir" GOFLAGS=-buildvcs=false go install "$MODULE@$VERSION"
echo "$VERSION" >"$stamp"
echo "minio installed at $bin"
