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
# shellcheck source=../lib/goinstall.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/goinstall.sh"
echo "promtool $VERSION into ${STRATA_BIN:-.cache/bin} (up to 8 minutes on 2 cores the first time: about 1 GiB of Go modules to download)"
go_install promtool github.com/prometheus/prometheus/cmd/promtool "$VERSION" -tags remove_all_sd
