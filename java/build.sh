#!/usr/bin/env bash
# Builds the Java client without running its tests: strata-core, strata-hadoop
# and the shaded jar hadoop/target/strata-hadoop-<version>-shaded.jar.
# Tests: java/test.sh (needs bin/strata). See docs/java.md.
set -euo pipefail
cd "$(dirname "$0")"
exec ./mvn.sh package -DskipTests "$@"
