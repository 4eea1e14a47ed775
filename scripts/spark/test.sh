#!/usr/bin/env bash
# make test-spark: Spark (PySpark in local mode) on Strata, against a real MinIO and a real
# `strata server --dev`: scripts/spark/test_spark.py, run by pytest from the virtual
# environment scripts/spark/venv.sh installs. See docs/java.md, "Spark".
#   STRATA_BINARY  the strata binary (default bin/strata)
#   STRATA_MINIO   the MinIO binary (default .cache/bin/minio)
#   STRATA_JAR     the shaded jar (default: scripts/spark/jar.sh's, which builds it when it is
#                  missing or older than java/'s sources)
# Extra arguments go to pytest (e.g. -k roundtrip).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

scripts/spark/venv.sh
export STRATA_JAR="${STRATA_JAR:-$(scripts/spark/jar.sh)}"
export STRATA_BINARY="${STRATA_BINARY:-$repo/bin/strata}"
# The servers this script starts, and their clients, run in plaintext unless
# STRATA_PLAINTEXT=0 and STRATA_TLS_CERT, STRATA_TLS_KEY and STRATA_TLS_CA name a
# certificate, its key and its CA (docs/security.md).
export STRATA_PLAINTEXT="${STRATA_PLAINTEXT:-1}"
export STRATA_MINIO="${STRATA_MINIO:-$repo/.cache/bin/minio}"
# Loopback only; and Spark's Python workers must be the venv's Python, which has pyspark.
export SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$repo/.cache/venv/bin/python"
exec "$repo/.cache/venv/bin/python" -m pytest -p no:cacheprovider -v "$@" scripts/spark
