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
# shellcheck source=../lib/goinstall.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/goinstall.sh"
echo "minio $VERSION into ${STRATA_BIN:-.cache/bin} (up to 10 minutes on 2 cores the first time, about 250 MiB of Go modules to download first)"
go_install minio github.com/minio/minio "$VERSION"
