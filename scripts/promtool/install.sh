#!/usr/bin/env bash
# Installs promtool, Prometheus' own checker, which the Go tests run on every
# process's /metrics (`promtool check metrics`) and on the Grafana dashboard's
# queries (`promtool check rules`): internal/statuspage's tests.
#
# promtool is built from source with `go install` at one pinned version into a
# project-local bin dir, without Prometheus' service discovery plugins (the
# remove_all_sd tag: promtool's checks need none of them). A first build on a
# 2-core machine with Go's caches empty took 7m27s, most of it downloading
# about 1 GiB of modules (Prometheus imports Google's and Kubernetes' API
# clients whatever the tags); with the module cache warm, about 2 minutes of
# compiling; a second run is a no-op.
#
# Usage: scripts/promtool/install.sh
#   env STRATA_BIN overrides the bin dir (then point STRATA_PROMTOOL at $STRATA_BIN/promtool).
# Afterwards: $REPO/.cache/bin/promtool, or set STRATA_PROMTOOL to another binary.
set -euo pipefail

readonly VERSION="v0.316.0" # Prometheus 3.16's promtool
readonly MODULE="github.com/prometheus/prometheus/cmd/promtool"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin_dir="${STRATA_BIN:-$repo/.cache/bin}"
bin="$bin_dir/promtool"
stamp="$bin_dir/.promtool.version"

# NB: the stamp is written only after a successful build, so an interrupted
# build is retried rather than trusted.
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$VERSION" ]]; then
	echo "promtool $VERSION already installed at $bin"
	exit 0
fi

mkdir -p "$bin_dir"
[[ -f "$repo/.cache/.gitignore" ]] || { mkdir -p "$repo/.cache" && echo '*' >"$repo/.cache/.gitignore"; }

echo "building promtool $VERSION into $bin_dir (up to 8 minutes on 2 cores the first time: about 1 GiB of Go modules to download)..."
# Build outside the repo so Strata's go.mod neither constrains nor records it.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
GOBIN="$bin_dir" GOFLAGS=-buildvcs=false go install -tags remove_all_sd "$MODULE@$VERSION"
echo "$VERSION" >"$stamp"
echo "promtool installed at $bin"
