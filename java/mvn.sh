#!/usr/bin/env bash
# Maven as the project's scripts run it (java/build.sh, java/test.sh, make bench-hdfs): batch
# mode, no transfer progress, and the local repository inside this checkout, .cache/m2 (ignored by
# git), so that a build writes nothing outside it; delete .cache/m2 to free the space.
# STRATA_M2 names another local repository (e.g. ~/.m2/repository, to share one with other projects).
# Arguments go to mvn.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
m2=${STRATA_M2:-$repo/.cache/m2}
if [ ! -d "$m2" ]; then
  echo "mvn.sh: first run: downloading the Java build's plugins and dependencies from Maven Central into $m2 (about 290 MiB: 3 to 4 minutes)" >&2
fi
exec mvn -B -ntp -Dmaven.repo.local="$m2" "$@"
