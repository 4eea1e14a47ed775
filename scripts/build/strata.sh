#!/usr/bin/env bash
# Builds bin/strata (make build), first saying how long it will take when Go has much to do: go
# build prints a line per module it downloads, then nothing while it compiles, which on a first
# build of a 2-core machine lasts minutes.
#   GO  the go command (default go); LDFLAGS  flags for the linker; the argument: the binary to
#   write (default bin/strata)
set -euo pipefail
cd "$(dirname "$0")/../.."
go=${GO:-go}
out=${1:-bin/strata}

# Packages that go build would compile, counted without downloading anything (GOPROXY=off fails
# when a module is missing from the module cache).
if list=$(GOPROXY=off "$go" list -deps -f '{{if .Stale}}x{{end}}' ./cmd/strata 2>/dev/null); then
  stale=$(grep -c x <<<"$list" || true)
  if [ "$stale" -gt 50 ]; then
    echo "building $out: compiling $stale packages (about 4 minutes on 2 cores; later builds take seconds)..."
  else
    echo "building $out..."
  fi
else
  echo "building $out: the first build downloads its Go modules (about 100 MiB) and compiles them (about 4 minutes on 2 cores)..."
fi
"$go" build ${LDFLAGS:+-ldflags "$LDFLAGS"} -o "$out" ./cmd/strata
