#!/usr/bin/env bash
# Prints the path of the Strata client's shaded jar, java/hadoop/target/strata-hadoop-*-shaded.jar,
# building it first (java/build.sh) when it is missing or older than a source of java/core or
# java/hadoop. Used by the Spark test and make bench-tpcds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
jar=$(ls java/hadoop/target/strata-hadoop-*-shaded.jar 2>/dev/null | tail -1 || true)
if [ -z "$jar" ] || [ -n "$(find java/pom.xml java/core java/hadoop -newer "$jar" -type f \
    \( -name '*.java' -o -name 'pom.xml' -o -path '*/resources/*' \) -not -path '*/target/*' -print -quit)" ]; then
  echo "building the shaded jar (java/build.sh)" >&2
  java/build.sh -q >&2
  jar=$(ls java/hadoop/target/strata-hadoop-*-shaded.jar | tail -1)
fi
echo "$PWD/$jar"
