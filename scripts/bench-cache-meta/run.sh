#!/usr/bin/env bash
# make bench-cache-meta: Strata in cache mode and S3A over the same MinIO bucket, side by side
# through the same Hadoop FileSystem API (issue 18: getFileStatus and listStatus on a cached
# subtree at least 10x faster than HeadObject/ListObjectsV2 against the same MinIO).
#
# Builds bin/strata and the Java modules (java/bench with -Ps3a: hadoop-aws and the AWS SDK),
# starts
#   - MinIO (.cache/bin/minio, or $STRATA_MINIO) with one bucket, "bench",
#   - Strata: `strata meta` and `strata worker` as separate processes, and the cache-mode
#     namespace "lake" over s3://bench/lake with sync interval -1 (what is loaded is trusted),
# runs io.strata.bench.FsBench's cache section once against strata://lake/ and
# s3a://bench/lake/ (one JVM, the two targets in turn phase by phase): S3A writes the objects,
# each target walks and reads them once (Strata's cold pass loads them), then getFileStatus,
# listStatus and open+read at each thread count; joins the results into one table with ratios
# (io.strata.bench.Join) and prints it. Every process it started is stopped on exit.
# S3A writes with fs.s3a.create.performance (one PUT an object, no checks): only the
# preparation writes. Strata's server CPU figures include MinIO's (its cold pass reads MinIO).
#
# Parameters (environment):
#   BENCH_THREADS           client threads of the phases (1,4,16,64)
#   BENCH_META_OPS          operations per phase, split among threads (20000)
#   BENCH_META_SECS         time limit of one phase on one target (20)
#   BENCH_CACHE_DIRS, BENCH_CACHE_FILES, BENCH_CACHE_FILE_SIZE   objects (100 x 100 x 1KiB)
#   BENCH_PREP_THREADS      threads writing them (16)
#   BENCH_WORK              scratch directory, on local disk (/tmp/strata-bench-cache)
#   BENCH_SKIP_BUILD=1      use bin/strata and java/bench/target as they are
# Extra arguments go to FsBench.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

THREADS=${BENCH_THREADS:-1,4,16,64}
META_OPS=${BENCH_META_OPS:-20000}
META_SECS=${BENCH_META_SECS:-20}
CACHE_DIRS=${BENCH_CACHE_DIRS:-100}
CACHE_FILES=${BENCH_CACHE_FILES:-100}
CACHE_FILE_SIZE=${BENCH_CACHE_FILE_SIZE:-1KiB}
PREP_THREADS=${BENCH_PREP_THREADS:-16}
WORK=${BENCH_WORK:-/tmp/strata-bench-cache}
MINIO=${STRATA_MINIO:-$ROOT/.cache/bin/minio}
ACCESS_KEY=strata-bench
SECRET_KEY=strata-bench-secret

BENCH_NAME=bench-cache-meta
# shellcheck source=../lib/bench.sh
. scripts/lib/bench.sh

# free_port: a loopback port nobody listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

[ -x "$MINIO" ] || { log "no MinIO at $MINIO: run 'make minio' (or set STRATA_MINIO)"; exit 1; }
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  log "building bin/strata and the Java modules (java/bench with S3A)"
  make build >&2
  (cd java && ./mvn.sh -q install -DskipTests -Ps3a) >&2
fi
jar=java/bench/target/classes
cp_file=java/bench/target/bench.classpath
[ -f "$cp_file" ] || { log "java/bench is not built"; exit 1; }
grep -q hadoop-aws "$cp_file" || { log "java/bench was built without -Ps3a (no hadoop-aws)"; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/minio/data/bench"
printf -- '-cp\n%s\n' "$ROOT/$jar:$(cat "$cp_file")" >"$WORK/cp.args"

port=$(free_port)
console=$(free_port)
endpoint="http://127.0.0.1:$port"
log "starting MinIO at $endpoint (bucket bench: a directory of its data directory)"
MINIO_ROOT_USER=$ACCESS_KEY MINIO_ROOT_PASSWORD=$SECRET_KEY MINIO_BROWSER=off MINIO_UPDATE=off \
  "$MINIO" server --quiet --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" \
  --certs-dir "$WORK/minio/certs" "$WORK/minio/data" >"$WORK/minio.log" 2>&1 &
minio_pid=$!
pids+=("$minio_pid")
for _ in $(seq 600); do
  curl -fs -o /dev/null "$endpoint/minio/health/cluster" && break
  kill -0 "$minio_pid" 2>/dev/null || { log "MinIO exited:"; tail -20 "$WORK/minio.log" >&2; exit 1; }
  sleep 0.1
done
curl -fs -o /dev/null "$endpoint/minio/health/cluster" || { log "MinIO is not live"; exit 1; }

export AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY AWS_REGION=us-east-1
start_strata 4GiB lake --mode cache --sync-interval -1 \
  --store "s3://bench/lake?endpoint=$endpoint&region=us-east-1"
log "MinIO at $endpoint, Strata at $meta; load average $(cut -d' ' -f1-3 /proc/loadavg)"

log "running FsBench (progress below; results in $WORK/results.tsv)"
run_fsbench 4g \
  --target strata=strata://lake/ --target s3a=s3a://bench/lake/ --sections cache \
  --conf "fs.strata.meta.address=$meta" \
  --conf "fs.s3a.endpoint=$endpoint" --conf fs.s3a.endpoint.region=us-east-1 \
  --conf fs.s3a.path.style.access=true --conf fs.s3a.connection.ssl.enabled=false \
  --conf "fs.s3a.access.key=$ACCESS_KEY" --conf "fs.s3a.secret.key=$SECRET_KEY" \
  --conf fs.s3a.aws.credentials.provider=org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider \
  --conf fs.s3a.connection.maximum=200 --conf fs.s3a.create.performance=true \
  --pids "strata=$meta_pid,$worker_pid,$minio_pid" --pids "s3a=$minio_pid" \
  --threads "$THREADS" --meta-ops "$META_OPS" --meta-secs "$META_SECS" \
  --cache-dirs "$CACHE_DIRS" --cache-files "$CACHE_FILES" --cache-file-size "$CACHE_FILE_SIZE" \
  --cache-writer s3a --prep-threads "$PREP_THREADS" \
  --out "$WORK/results.tsv" "$@"

java @"$WORK/cp.args" io.strata.bench.Join --subject strata --baseline s3a "$WORK/results.tsv" \
  >"$WORK/table.txt"
cat "$WORK/table.txt"
