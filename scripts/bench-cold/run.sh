#!/usr/bin/env bash
# make bench-cold: cold sequential reads from a real S3 bucket (MinIO) behind one bandwidth
# limit, as a share of that limit (issue 41's target: 0.9 or better). Starts MinIO, `strata
# bench proxy` in front of it (the link), `strata meta` and `strata worker`, and a block-mode
# namespace `cold` whose bucket is reached through the proxy; puts the files through Strata;
# then, each round, drops them from the worker's cache (`strata admin uncache`) and reads them
# back with `strata fs -cat` into /dev/null (one process a file, in parallel; the client checks
# every page's CRC), then, untimed, reads them again from the cache against the source's
# SHA-256. Prints a row a round and the median; the bytes each round took over the
# link (the proxy's counters) say whether anything was fetched twice.
#
# Parameters (environment):
#   BENCH_BANDWIDTH   the link's limit each way, per second (250MB: seed 000's 10 Gb/s
#                     shared by 5 nodes, as `strata bench data`)
#   BENCH_FILES       files read at once (1); BENCH_SIZE: each file's size (1GiB)
#   BENCH_ROUNDS      rounds; the median is reported (3)
#   BENCH_WORK        scratch directory, on local disk (/tmp/strata-bench-cold)
#   BENCH_KEEP=1      keep the run's data; BENCH_SKIP_BUILD=1: use bin/strata as it is
#   STRATA_MINIO      the MinIO binary (.cache/bin/minio, which `make minio` builds)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

BANDWIDTH=${BENCH_BANDWIDTH:-250MB}
FILES=${BENCH_FILES:-1}
SIZE=${BENCH_SIZE:-1GiB}
ROUNDS=${BENCH_ROUNDS:-3}
WORK=${BENCH_WORK:-/tmp/strata-bench-cold}
MINIO=${STRATA_MINIO:-$ROOT/.cache/bin/minio}
KEY=strata-bench SECRET=strata-bench-secret

BENCH_NAME=bench-cold
# shellcheck source=../lib/bench.sh
. scripts/lib/bench.sh
# shellcheck source=../lib/minio.sh
. scripts/lib/minio.sh
[ -x "$MINIO" ] || { log "no MinIO at $MINIO: run 'make minio' (or set STRATA_MINIO)"; exit 1; }
bytes=$(numfmt --from=auto "${SIZE%B}") || { log "BENCH_SIZE=$SIZE: want a size such as 1GiB"; exit 1; }
link=$(numfmt --from=auto "${BANDWIDTH%B}") || { log "BENCH_BANDWIDTH=$BANDWIDTH: want a rate such as 250MB"; exit 1; }
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  make build >&2
fi

rm -rf "$WORK"
mkdir -p "$WORK/minio/cold" # a top-level directory of MinIO's drive is a bucket
export AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
start_minio "$WORK/minio" "$KEY" "$SECRET"
bin/strata bench proxy --to "127.0.0.1:$minio_port" --bandwidth "$BANDWIDTH" --control 127.0.0.1:0 \
  >"$WORK/proxy.log" 2>&1 &
pids+=($!)
wait_for "$WORK/proxy.log" 'proxy: control on' 30 $!
proxy=$(sed -n 's/^proxy: serving on //p' "$WORK/proxy.log")
control=$(sed -n 's/^proxy: control on //p' "$WORK/proxy.log")
# The cache holds every file: what a round fetches is what it reads, nothing evicted.
start_strata "$((FILES * bytes * 2 / 1048576 + 1024))MiB" cold --store "s3://cold?endpoint=http://$proxy"
machine_info
log "MinIO at 127.0.0.1:$minio_port, the link ($BANDWIDTH each way) at $proxy, Strata at $meta"

# proxy_in: the bytes the link has carried from the bucket so far.
proxy_in() {
  curl -sf "http://$control/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["down_bytes"])'
}
# cpu_ticks PID: the process's user and system CPU so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

log "writing $FILES x $SIZE of random bytes, then putting them through Strata"
for i in $(seq 0 $((FILES - 1))); do
  head -c "$bytes" /dev/urandom >"$WORK/src$i"
  sha256sum <"$WORK/src$i" | cut -d' ' -f1 >"$WORK/src$i.sha"
done
bin/strata fs --meta "$meta" -mkdir -p strata://cold/bench
# NB: wait for these, not for the servers (a bare wait would).
jobs=()
for i in $(seq 0 $((FILES - 1))); do
  bin/strata fs --meta "$meta" -put "$WORK/src$i" "strata://cold/bench/f$i" &
  jobs+=($!)
done
for j in "${jobs[@]}"; do wait "$j" || { log "a put failed"; exit 1; }; done
rm -f "$WORK"/src?

hz=$(getconf CLK_TCK)
results=$WORK/rounds.tsv
: >"$results"
for round in $(seq "$ROUNDS"); do
  bin/strata admin uncache --meta "$meta" --namespace cold /bench >&2
  in0=$(proxy_in) cpu0=$(cpu_ticks "$worker_pid")
  t0=$(date +%s.%N)
  jobs=()
  for i in $(seq 0 $((FILES - 1))); do
    bin/strata fs --meta "$meta" -cat "strata://cold/bench/f$i" >/dev/null &
    jobs+=($!)
  done
  for j in "${jobs[@]}"; do wait "$j" || { log "round $round: a read failed"; exit 1; }; done
  t1=$(date +%s.%N)
  in1=$(proxy_in) cpu1=$(cpu_ticks "$worker_pid")
  # What the round cached, read again (untimed), against the source: the
  # client checked every page's CRC as it read; this checks the file.
  for i in $(seq 0 $((FILES - 1))); do
    got=$(bin/strata fs --meta "$meta" -cat "strata://cold/bench/f$i" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$(cat "$WORK/src$i.sha")" ] || { log "round $round: file $i read back wrong"; exit 1; }
  done
  awk -v t0="$t0" -v t1="$t1" -v n="$((FILES * bytes))" -v link="$link" -v in0="$in0" -v in1="$in1" \
    -v c="$((cpu1 - cpu0))" -v hz="$hz" -v r="$round" 'BEGIN {
      s = t1 - t0; mbs = n / s / 1e6
      printf "%d\t%.2f\t%.0f\t%.2f\t%.3f\t%.2f\n", r, s, mbs, mbs * 1e6 / link, (in1 - in0) / n, c / hz / (n / 1e9)
    }' >>"$results"
  log "round $round: $(tail -1 "$results")"
done

echo
echo "Cold sequential reads from MinIO behind a $BANDWIDTH link: $FILES x $SIZE, $ROUNDS rounds ($(date -u +%F), commit $(git rev-parse --short HEAD))"
echo "Machine: $MACHINE; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'round\tseconds\tMB/s\tof the link\tlink bytes / file bytes\tworker cpu s/GB\n'
cat "$results"
sort -t$'\t' -k3,3n "$results" | awk -F'\t' -v n="$ROUNDS" '
  { mbs[NR] = $3; share[NR] = $4 }
  END {
    m = int((n + 1) / 2)
    printf "median\t\t%s\t%s\t\t\nslowest/fastest round: %.2f\n", mbs[m], share[m], mbs[1] / mbs[n]
  }'
