#!/usr/bin/env bash
# make bench-tpcds: seed 000's experiment. TPC-DS on Spark (PySpark, local mode) three ways
# against one MinIO bucket behind one bandwidth limit: s3a:// straight to the bucket, and
# strata:// in cache mode, cold (after `strata admin uncache`) and warm (after `strata admin
# load`). docs/benchmarks.md, "TPC-DS on Spark", has the results and the choices.
#
# Steps: builds bin/strata and the shaded jar; installs pyspark, duckdb and its TPC-DS
# extension into .cache/venv (scripts/spark/venv.sh) and S3A's jars into Maven's local
# repository; generates the data once into .cache/bench-tpcds/sf<SCALE> (bench/tpcds/gen.py);
# starts MinIO, `strata bench proxy` in front of it (the shared limit), `strata meta` and
# `strata worker`, and the cache-mode namespace `tpcds` over the bucket through the proxy;
# runs bench/tpcds/run.py, which uploads the data, selects the IO-heavy queries and runs
# them; prints the tables and splices them into docs/benchmarks.md. Every process it started
# is stopped on exit, Ctrl-C included.
#
# Parameters (environment):
#   BENCH_SCALE        TPC-DS scale factor (1)
#   BENCH_BANDWIDTHS   the limit's settings, each way (8MB,40MB; 8MB,16MB,40MB are seed 000's 10, 20 and
#                      50 Gb/s per core of its cluster, times this machine's 2 cores)
#   BENCH_ROUNDS       rounds per setting; medians are reported (3)
#   BENCH_QUERIES      comma list of queries (q03,q07,...); empty: select the 8 IO-heavy ones
#   BENCH_ALL_AT       also run all 99 queries three ways once at this setting (e.g. 40MB)
#   BENCH_WORKER_ARGS  extra flags of `strata worker` (e.g. --page-size 256KiB)
#   BENCH_WORK         scratch directory, on local disk (/tmp/strata-bench-tpcds)
#   BENCH_DOC          the file to update (docs/benchmarks.md); BENCH_WRITE_DOC=0 to leave it
#   STRATA_MINIO       the MinIO binary (.cache/bin/minio, which `make minio` builds)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

SCALE=${BENCH_SCALE:-1}
BANDWIDTHS=${BENCH_BANDWIDTHS:-8MB,40MB}
ROUNDS=${BENCH_ROUNDS:-3}
QUERIES=${BENCH_QUERIES:-}
ALL_AT=${BENCH_ALL_AT:-}
WORK=${BENCH_WORK:-/tmp/strata-bench-tpcds}
DOC=${BENCH_DOC:-docs/benchmarks.md}
WRITE_DOC=${BENCH_WRITE_DOC:-1}
MINIO=${STRATA_MINIO:-$ROOT/.cache/bin/minio}
KEY=strata-bench SECRET=strata-bench-secret
settings=$(env | grep -E '^BENCH_[A-Z_]+=' | grep -v '^BENCH_\(WORK\|DOC\|WRITE_DOC\)=' | sort | tr '\n' ' ' || true)
COMMAND="${settings}make bench-tpcds"

log() { echo "bench-tpcds: $*" >&2; }
[ -x "$MINIO" ] || { log "no MinIO at $MINIO: run 'make minio' (or set STRATA_MINIO)"; exit 1; }

pids=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  [ "$rc" = 0 ] || log "failed (exit $rc); logs in $WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=../lib/minio.sh
. scripts/lib/minio.sh

# wait_for FILE PATTERN SECONDS PID: until FILE has a line matching PATTERN, or PID dies.
wait_for() {
  for _ in $(seq $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { log "$1: the process exited:"; tail -20 "$1" >&2; return 1; }
    sleep 0.1
  done
  log "$1: no '$2' after $3 s:"; tail -20 "$1" >&2; return 1
}

log "building bin/strata and the shaded jar; installing pyspark and duckdb into .cache/venv"
make build >&2
JAR=$(scripts/spark/jar.sh)
scripts/spark/venv.sh scripts/spark/requirements.txt scripts/bench-tpcds/requirements.txt
PY=$ROOT/.cache/venv/bin/python
spark_hadoop=$(ls "$ROOT"/.cache/venv/lib/python3*/site-packages/pyspark/jars/hadoop-client-api-*.jar | sed 's/.*hadoop-client-api-\(.*\)\.jar/\1/')
s3a_hadoop=$(sed -n 's:.*<version>\(3\.[0-9.]*\)</version>.*:\1:p' scripts/bench-tpcds/s3a-pom.xml)
[ "$spark_hadoop" = "$s3a_hadoop" ] || { log "Spark has Hadoop $spark_hadoop, s3a-pom.xml says hadoop-aws $s3a_hadoop"; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/minio/tpcds" # a top-level directory of MinIO's drive is a bucket
log "resolving hadoop-aws $s3a_hadoop and the AWS SDK bundle (about 650 MB the first time)"
java/mvn.sh -q -f scripts/bench-tpcds/s3a-pom.xml \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -DincludeScope=runtime -Dmdep.outputFile="$WORK/s3a.classpath" >&2
DATA=$ROOT/.cache/bench-tpcds/sf$SCALE
"$PY" bench/tpcds/gen.py --scale "$SCALE" --out "$DATA"

# The servers this script starts, and their clients, run in plaintext unless
# STRATA_PLAINTEXT=0 and STRATA_TLS_CERT, STRATA_TLS_KEY and STRATA_TLS_CA name a
# certificate, its key and its CA (docs/security.md).
export STRATA_PLAINTEXT="${STRATA_PLAINTEXT:-1}"
export AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
start_minio "$WORK/minio" "$KEY" "$SECRET"

bin/strata bench proxy --to "127.0.0.1:$minio_port" --control 127.0.0.1:0 >"$WORK/proxy.log" 2>&1 &
pids+=($!)
wait_for "$WORK/proxy.log" 'proxy: serving on' 30 $!
proxy=$(sed -n 's/^proxy: serving on //p' "$WORK/proxy.log")
control=$(sed -n 's/^proxy: control on //p' "$WORK/proxy.log")

GOMEMLIMIT=2GiB bin/strata meta --data-dir "$WORK/meta" --listen 127.0.0.1:0 2>"$WORK/meta.log" &
pids+=($!)
wait_for "$WORK/meta.log" 'strata: serving on' 60 $!
meta=$(sed -n 's/^strata: serving on //p' "$WORK/meta.log")
# The superuser's token, which the leader writes as it takes over (docs/security.md): for the
# CLI, the worker and Spark started from here.
for _ in $(seq 300); do [ -s "$WORK/meta/token" ] && break; sleep 0.1; done
export STRATA_TOKEN_FILE="$WORK/meta/token"
bin/strata worker --meta "$meta" --listen 127.0.0.1:0 --state-dir "$WORK/worker" \
  --cache-dir "$WORK/cache" --cache-size 8GiB ${BENCH_WORKER_ARGS:-} 2>"$WORK/worker.log" &
pids+=($!)
wait_for "$WORK/worker.log" 'serving on' 60 $!
bin/strata admin ns create tpcds --mode cache --sync-interval -1 \
  --store "s3://tpcds?endpoint=http://$proxy" --meta "$meta" >&2
log "MinIO at 127.0.0.1:$minio_port, the proxy at $proxy (control $control), Strata at $meta"

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
MACHINE="$(nproc) cores ($cpu_model), $mem memory; $(uname -sr); $(java -version 2>&1 | head -1); Spark $("$PY" -c 'import pyspark; print(pyspark.__version__)')"
COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- bench scripts cmd internal java 2>/dev/null || echo " + uncommitted changes")
log "machine: $MACHINE; load average $(cut -d' ' -f1-3 /proc/loadavg)"

args=(--data "$DATA" --meta "$meta" --strata "$ROOT/bin/strata" --prefix "sf$SCALE"
  --s3a-endpoint "http://$proxy" --load-endpoint "http://127.0.0.1:$minio_port"
  --access-key "$KEY" --secret-key "$SECRET" --control "http://$control"
  --classpath "$JAR:$(cat "$WORK/s3a.classpath")" --bandwidths "$BANDWIDTHS" --rounds "$ROUNDS"
  --out "$WORK/results.json")
[ -z "$QUERIES" ] || args+=(--queries "$QUERIES")
[ -z "$ALL_AT" ] || args+=(--all-at "$ALL_AT")
# In the background, so that a signal to this script is handled at once.
: >"$WORK/run.log"
SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$PY" "$PY" bench/tpcds/run.py "${args[@]}" >"$WORK/tables.md" 2>"$WORK/run.log" </dev/null &
bench_pid=$!
pids+=("$bench_pid")
tail -n +1 -f --pid="$bench_pid" "$WORK/run.log" | grep --line-buffered '^bench-tpcds:' >&2 &
rc=0
wait "$bench_pid" || rc=$?
cat "$WORK/tables.md"
[ "$rc" = 0 ] || { log "run.py failed (exit $rc): $WORK/run.log"; exit "$rc"; }

if [ "$WRITE_DOC" = 1 ]; then
  scripts/bench-hdfs/splice.sh "$DOC" "$WORK/tables.md" "$COMMAND" "$MACHINE" "$COMMIT" bench-tpcds markdown
  log "updated $DOC"
fi
