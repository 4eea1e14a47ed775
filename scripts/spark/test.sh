#!/usr/bin/env bash
# make test-spark: Spark (PySpark in local mode) on Strata, against a real MinIO and a real
# `strata server --dev`: scripts/spark/test_spark.py, run by pytest from the virtual
# environment scripts/spark/venv.sh installs. See docs/java.md, "Spark".
#   STRATA_BINARY  the strata binary (default bin/strata)
#   STRATA_MINIO   the MinIO binary (default .cache/bin/minio)
#   STRATA_JAR     the shaded jar (default java/hadoop/target/strata-hadoop-*-shaded.jar,
#                  rebuilt first by java/build.sh when it is missing or older than java/'s sources)
# Extra arguments go to pytest (e.g. -k roundtrip).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

scripts/spark/venv.sh
if [ -z "${STRATA_JAR:-}" ]; then
  jar=$(ls java/hadoop/target/strata-hadoop-*-shaded.jar 2>/dev/null | tail -1 || true)
  if [ -z "$jar" ] || [ -n "$(find java/pom.xml java/core java/hadoop -newer "$jar" -type f \
      \( -name '*.java' -o -name 'pom.xml' -o -path '*/resources/*' \) -not -path '*/target/*' -print -quit)" ]; then
    echo "test-spark: building the shaded jar (java/build.sh)" >&2
    java/build.sh -q >&2
  fi
fi
export STRATA_BINARY="${STRATA_BINARY:-$repo/bin/strata}"
export STRATA_MINIO="${STRATA_MINIO:-$repo/.cache/bin/minio}"
# Loopback only; and Spark's Python workers must be the venv's Python, which has pyspark.
export SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$repo/.cache/venv/bin/python"
exec "$repo/.cache/venv/bin/python" -m pytest -p no:cacheprovider -v "$@" scripts/spark
