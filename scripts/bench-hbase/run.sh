#!/usr/bin/env bash
# make bench-hbase: YCSB against HBase with its root directory and its write-ahead log on Strata,
# and on HDFS, in one run (docs/benchmarks.md, "HBase with YCSB").
#
# Builds bin/strata and the Java modules, starts
#   - HDFS: MiniDFSCluster (1 NameNode + 1 DataNode) in its own JVM (io.strata.bench.MiniHdfs),
#   - Strata: `strata meta` and `strata worker` as separate processes, a file:// bucket,
# then runs io.strata.hbase.bench.HBaseBench once per target and round, each in a JVM of its own
# (first the log's syncs on the file system alone: hflush and hsync of 1000-byte records by 1 and
# by 8 writers, each to a file of its own; then an HBase mini cluster with ZooKeeper, a master and
# region servers in it, root directory and log on the target), alternating which target goes
# first, so that the machine's noise falls on both. io.strata.hbase.bench.HBaseReport joins the
# rounds (medians) into one table, printed and spliced into docs/benchmarks.md between the
# bench-hbase markers. Every process it started is stopped on exit, Ctrl-C included.
#
# Parameters (environment):
#   BENCH_QUICK=1          small sizes for development (and the doc is left alone)
#   BENCH_RECORDS          rows loaded (20000); BENCH_OPS: operations per workload (10000)
#   BENCH_THREADS          YCSB client threads (8); BENCH_REGIONSERVERS: region servers (1)
#   BENCH_SYNCS            records (each synced) per writer of the sync phases (2000)
#   BENCH_ROUNDS           rounds per target (2)
#   BENCH_PHASES           the phases to run, e.g. syncs or load,a (all; the doc is left alone
#                          unless all ran): syncs, load, a, b, c, f, e, major-compaction, restart
#   BENCH_WORK             scratch directory, on local disk (/tmp/strata-bench-hbase)
#   BENCH_DOC              the file to update (docs/benchmarks.md); BENCH_WRITE_DOC=0 to leave it
#   BENCH_SKIP_BUILD=1     use bin/strata and java/*/target as they are
# Extra arguments go to HBaseBench (e.g. --conf hbase.wal.provider=filesystem).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
  d_records=2000 d_ops=1000 d_syncs=200 d_rounds=1 d_write_doc=0
else
  d_records=20000 d_ops=10000 d_syncs=2000 d_rounds=2 d_write_doc=1
fi
RECORDS=${BENCH_RECORDS:-$d_records}
OPS=${BENCH_OPS:-$d_ops}
THREADS=${BENCH_THREADS:-8}
REGIONSERVERS=${BENCH_REGIONSERVERS:-1}
SYNCS=${BENCH_SYNCS:-$d_syncs}
ROUNDS=${BENCH_ROUNDS:-$d_rounds}
WORK=${BENCH_WORK:-/tmp/strata-bench-hbase}
DOC=${BENCH_DOC:-docs/benchmarks.md}
WRITE_DOC=${BENCH_WRITE_DOC:-$d_write_doc}
phases=()
if [ -n "${BENCH_PHASES:-}" ]; then
  phases=(--phases "$BENCH_PHASES")
  WRITE_DOC=0
fi

# The command as it was given, for the doc: make bench-hbase with the BENCH_ settings in force.
settings=$(env | grep -E '^BENCH_[A-Z_]+=' | grep -v '^BENCH_\(WORK\|DOC\|WRITE_DOC\|SKIP_BUILD\)=' | sort | tr '\n' ' ' || true)
COMMAND="${settings}make bench-hbase${*:+ ARGS=\"$*\"}"

BENCH_NAME=bench-hbase
# shellcheck source=../lib/bench.sh
. scripts/lib/bench.sh
build_all
for f in java/bench/target/bench.classpath java/hbase/target/hbase.classpath; do
  [ -f "$f" ] || { log "$f is missing: build the Java modules first"; exit 1; }
done

rm -rf "$WORK"
mkdir -p "$WORK"
printf -- '-cp\n%s\n' "$ROOT/java/bench/target/classes:$(cat java/bench/target/bench.classpath)" >"$WORK/cp.args"
printf -- '-cp\n%s\n' "$ROOT/java/hbase/target/classes:$(cat java/hbase/target/hbase.classpath)" >"$WORK/hbase.args"
# What HBase needs on Java 17, as the module's tests get it.
sed -n 's:.*<hbase.jvm.args>\(.*\)</hbase.jvm.args>.*:\1:p' java/hbase/pom.xml | tr ' ' '\n' >>"$WORK/hbase.args"

# NB: permissions off: HBase's mini cluster runs each region server as a test user of its own
# (root.hfs.N, in the group supergroup), which the NameNode, in another JVM, does not know.
start_minihdfs 3g --conf dfs.permissions.enabled=false
start_strata 10GiB default --store "file://$WORK/bucket"
wait_for "$WORK/hdfs.uri" '^hdfs://' 180 "$hdfs_pid"
hdfs=$(head -1 "$WORK/hdfs.uri")
strata_pids="$meta_pid,$worker_pid"
log "HDFS at $hdfs, Strata at $meta"

machine_info
COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- java scripts 2>/dev/null || echo " + uncommitted changes")
log "machine: $MACHINE; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# run TARGET FS ROUND CONF PIDS [ARGS]: one HBaseBench JVM (the file system's server processes
# PIDS, for the CPU columns); its log in $WORK/TARGET-ROUND.log.
run() {
  log "round $3: $1 (log in $WORK/$1-$3.log)"
  # NB: HBase's testing utility keeps ZooKeeper's data and its own under this directory.
  java -Xmx4g -Dtest.build.data.basedirectory="$WORK/hbase-$1-$3" @"$WORK/hbase.args" \
    io.strata.hbase.bench.HBaseBench --target "$1" --fs "$2" \
    ${4:+--conf "$4"} --records "$RECORDS" --ops "$OPS" --threads "$THREADS" \
    --syncs "$SYNCS" --regionservers "$REGIONSERVERS" --out "$WORK/results.tsv" \
    --server-pids "$5" "${phases[@]}" "${@:6}" \
    >"$WORK/$1-$3.log" 2>&1 </dev/null &
  local pid=$!
  pids+=("$pid")
  wait "$pid" || { log "$1 round $3 failed:"; grep -v '^\s*at ' "$WORK/$1-$3.log" | tail -20 >&2; exit 1; }
  grep '^hbasebench: [a-z]*	' "$WORK/$1-$3.log" | cut -c13- | cut -f1-8,12,13 >&2 || true
}
: >"$WORK/results.tsv"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then
    run strata strata://default/ "$round" "fs.strata.meta.address=$meta" "$strata_pids" "$@"
    run hdfs "$hdfs/" "$round" "" "$hdfs_pid" "$@"
  else
    run hdfs "$hdfs/" "$round" "" "$hdfs_pid" "$@"
    run strata strata://default/ "$round" "fs.strata.meta.address=$meta" "$strata_pids" "$@"
  fi
done

java @"$WORK/hbase.args" io.strata.hbase.bench.HBaseReport --subject strata --baseline hdfs \
  "$WORK/results.tsv" >"$WORK/table.txt"
{
  echo "records $RECORDS x 10 fields x 100 B, $OPS operations per workload, $THREADS threads," \
    "$REGIONSERVERS region server(s), $ROUNDS round(s) per target, $SYNCS syncs of 1000 B per sync writer"
  cat "$WORK/table.txt"
} >"$WORK/section.txt"
cat "$WORK/section.txt"

if [ "$WRITE_DOC" = 1 ]; then
  scripts/bench-hdfs/splice.sh "$DOC" "$WORK/section.txt" "$COMMAND" "$MACHINE" "$COMMIT" bench-hbase
  log "updated $DOC"
fi
