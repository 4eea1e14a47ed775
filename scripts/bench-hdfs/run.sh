#!/usr/bin/env bash
# make bench-hdfs: Strata and a real HDFS side by side through the same Hadoop FileSystem API.
#
# Builds bin/strata and the Java modules, starts
#   - HDFS: MiniDFSCluster (1 NameNode + 1 DataNode, edit log fsynced on local disk) in its own
#     JVM (io.strata.bench.MiniHdfs),
#   - Strata: `strata meta` and `strata worker` as separate processes, a file:// bucket,
# runs io.strata.bench.FsBench once against both (one JVM, the two targets in turn phase by
# phase), joins the results into one table with ratios (io.strata.bench.Join), prints it, and
# rewrites the section of docs/benchmarks.md between the bench-hdfs markers with the table, the
# machine and the command. Every process it started is stopped on exit, Ctrl-C included.
#
# Parameters (environment; the defaults are issue 5's):
#   BENCH_QUICK=1           small sizes for development (and the doc is left alone)
#   BENCH_THREADS           client threads of the metadata phases (1,4,16,64)
#   BENCH_META_OPS          operations per metadata phase, split among threads (20000)
#   BENCH_META_SECS         time limit of one metadata phase on one system (30)
#   BENCH_META_ONLY         only these metadata phases, with those whose files they use
#                           (e.g. listStatus; rename runs create_write_0 too); default: all
#   BENCH_TREE_FILES        files of the nested tree (1000000), BENCH_BIG_DIR: one directory's (100000)
#   BENCH_PREP_THREADS      threads preparing them (64); BENCH_TREE_REPEAT: runs per tree op (3)
#   BENCH_IO_FILES, BENCH_IO_SIZE          large files in parallel (4 x 256MiB)
#   BENCH_IO_ROUNDS         rounds of the large (and huge) files, targets alternated; rows are
#                           the median round (3)
#   BENCH_IO_HUGE_FILES, BENCH_IO_HUGE_SIZE  huge files, more than the worker's cache holds, so
#                           that eviction and the bucket take part (2 x 4GiB; 0 files: none);
#                           Strata and the local file system only, each target's deleted before
#                           the next writes (the disk needs about 2.5 times their size free)
#   BENCH_CACHE_SIZE        the worker's cache (4GiB: less than the huge files)
#   BENCH_SMALL_FILES, BENCH_SMALL_SIZE, BENCH_SMALL_THREADS   (5000 x 64KiB, 16 threads)
#   BENCH_SECTIONS          meta,tree,io
#   BENCH_WORK              scratch directory, on local disk (/tmp/strata-bench-hdfs)
#   BENCH_DOC               the file to update (docs/benchmarks.md); BENCH_WRITE_DOC=0 to leave it
#   BENCH_SKIP_BUILD=1      use bin/strata and java/bench/target as they are
#   BENCH_CLIENT_CP         the Java client's classes (default: this checkout's core and hadoop
#                           target/classes), e.g. another commit's jars for a client's before
#   STRATA_BIN              the strata binary of the Strata target (default bin/strata)
#   BENCH_KEEP=1            keep the run's data (buckets, caches, state) in BENCH_WORK; by
#                           default a run that succeeds removes it and keeps logs and results
#   BENCH_COMPARE=security  no HDFS: two Strata services side by side instead, one with tokens
#                           and TLS (`secure`), one without (`plain`: --insecure-no-auth,
#                           plaintext), each row's target being secure within 10% of plain
#                           (issue 23; the doc is left alone)
#   BENCH_COMPARE=metrics   no HDFS: two Strata services side by side instead, one serving
#                           metrics (`metrics`, its /metrics scraped every 5 s meanwhile), one
#                           with --http-listen off (`nometrics`: none collected), each row's
#                           target within 10% of the other (issue 38; the doc is left alone)
#   BENCH_COMPARE=binary    no HDFS: two Strata services side by side instead, `new` from
#                           bin/strata and `old` from BENCH_BASELINE_BIN (another commit's
#                           build), phase by phase in turn, each row within 10% of the other
#                           (a refactoring's "within noise"; the doc is left alone)
# Extra arguments go to FsBench (e.g. --meta-secs 10).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
  d_threads=1,4,16 d_ops=2000 d_secs=10 d_tree=20000 d_big=5000 d_rep=1
  d_io_files=2 d_io_size=32MiB d_small=500 d_write_doc=0 d_rounds=1 d_huge=0
else
  d_threads=1,4,16,64 d_ops=20000 d_secs=30 d_tree=1000000 d_big=100000 d_rep=3
  d_io_files=4 d_io_size=256MiB d_small=5000 d_write_doc=1 d_rounds=3 d_huge=2
fi
THREADS=${BENCH_THREADS:-$d_threads}
META_OPS=${BENCH_META_OPS:-$d_ops}
META_SECS=${BENCH_META_SECS:-$d_secs}
TREE_FILES=${BENCH_TREE_FILES:-$d_tree}
BIG_DIR=${BENCH_BIG_DIR:-$d_big}
PREP_THREADS=${BENCH_PREP_THREADS:-64}
TREE_REPEAT=${BENCH_TREE_REPEAT:-$d_rep}
IO_FILES=${BENCH_IO_FILES:-$d_io_files}
IO_SIZE=${BENCH_IO_SIZE:-$d_io_size}
IO_ROUNDS=${BENCH_IO_ROUNDS:-$d_rounds}
IO_HUGE_FILES=${BENCH_IO_HUGE_FILES:-$d_huge}
IO_HUGE_SIZE=${BENCH_IO_HUGE_SIZE:-4GiB}
CACHE_SIZE=${BENCH_CACHE_SIZE:-4GiB}
SMALL_FILES=${BENCH_SMALL_FILES:-$d_small}
SMALL_SIZE=${BENCH_SMALL_SIZE:-64KiB}
SMALL_THREADS=${BENCH_SMALL_THREADS:-16}
SECTIONS=${BENCH_SECTIONS:-meta,tree,io}
WORK=${BENCH_WORK:-/tmp/strata-bench-hdfs}
DOC=${BENCH_DOC:-docs/benchmarks.md}
WRITE_DOC=${BENCH_WRITE_DOC:-$d_write_doc}

# The command as it was given, for the doc: make bench-hdfs with the BENCH_ settings in force.
settings=$(env | grep -E '^BENCH_[A-Z_]+=' | grep -v '^BENCH_\(WORK\|DOC\|WRITE_DOC\|SKIP_BUILD\)=' | sort | tr '\n' ' ' || true)
COMMAND="${settings}make bench-hdfs${*:+ ARGS=\"$*\"}"

BENCH_NAME=bench-hdfs
# shellcheck source=../lib/bench.sh
. scripts/lib/bench.sh

build_all
jar=java/bench/target/classes
[ -f java/bench/target/bench.classpath ] || { log "java/bench is not built"; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
# NB: this checkout's client classes first: bench.classpath names the strata jars of the local
# Maven repository, which another checkout sharing it (STRATA_M2) may have installed since.
# BENCH_CLIENT_CP: another build's client classes instead (a client change's before).
client_cp=${BENCH_CLIENT_CP:-$ROOT/java/core/target/classes:$ROOT/java/hadoop/target/classes}
printf -- '-cp\n%s\n' "$ROOT/$jar:$client_cp:$(cat java/bench/target/bench.classpath)" >"$WORK/cp.args"

COMPARE=${BENCH_COMPARE:-hdfs}
# add_target NAME [CONF...]: FsBench's arguments for the Strata service start_strata started
# last, as target NAME with configuration CONF (key=value) besides the service's address.
targets=()
add_target() {
  local name=$1 conf
  shift
  targets+=(--target "$name=strata://default/" --pids "$name=$meta_pid,$worker_pid"
    --target-conf "$name:fs.strata.meta.address=$meta")
  for conf in "$@"; do
    targets+=(--target-conf "$name:$conf")
  done
}
case "$COMPARE" in
  hdfs)
    start_minihdfs 6g
    start_strata "$CACHE_SIZE" default --store "file://$WORK/bucket"
    wait_for "$WORK/hdfs.uri" '^hdfs://' 180 "$hdfs_pid"
    hdfs=$(head -1 "$WORK/hdfs.uri")
    log "HDFS at $hdfs, Strata at $meta"
    # The io section's second baseline: the same disk through Hadoop's checksummed
    # LocalFileSystem (issue 41), no service.
    mkdir -p "$WORK/local"
    subject=strata baseline=hdfs join_args=(--io-baseline local)
    targets=(--target strata=strata://default/ --target "hdfs=$hdfs/"
      --target "local=file://$WORK/local/" --io-only local --io-huge-targets strata,local
      --conf "fs.strata.meta.address=$meta" --pids "strata=$meta_pid,$worker_pid"
      --pids "hdfs=$hdfs_pid") ;;
  security)
    STRATA_DIR=$WORK/secure STRATA_SECURITY=on start_strata 20GiB default --store "file://$WORK/secure/bucket"
    add_target secure fs.strata.tls.plaintext=false "fs.strata.tls.ca=$WORK/secure/tls/ca.pem" \
      "fs.strata.token.file=$WORK/secure/meta/token"
    STRATA_DIR=$WORK/plain STRATA_SECURITY=off start_strata 20GiB default --store "file://$WORK/plain/bucket"
    # NB: the plain client must send no token either: none in the environment or ~/.strata.
    unset STRATA_TOKEN_FILE STRATA_TOKEN
    export JAVA_TOOL_OPTIONS="-Duser.home=$WORK/plain"
    add_target plain fs.strata.tls.plaintext=true
    subject=secure baseline=plain join_args=(--within 10) WRITE_DOC=0 ;;
  metrics)
    STRATA_DIR=$WORK/off STRATA_HTTP=off start_strata 20GiB default --store "file://$WORK/off/bucket"
    add_target nometrics "fs.strata.token.file=$WORK/off/meta/token"
    STRATA_DIR=$WORK/on start_strata 20GiB default --store "file://$WORK/on/bucket"
    web=$(sed -n 's/^strata: http on \([^ ]*\).*/\1/p' "$WORK/on/meta.log")
    (while kill -0 "$meta_pid" 2>/dev/null; do curl -sf "http://$web/metrics" >/dev/null || true; sleep 5; done) &
    pids+=("$!")
    add_target metrics "fs.strata.token.file=$WORK/on/meta/token"
    subject=metrics baseline=nometrics join_args=(--within 10) WRITE_DOC=0 ;;
  binary)
    old_bin=${BENCH_BASELINE_BIN:-}
    [ -x "$old_bin" ] || { log "BENCH_COMPARE=binary: BENCH_BASELINE_BIN=$old_bin is not an executable"; exit 2; }
    STRATA_DIR=$WORK/old STRATA_BIN=$old_bin STRATA_HTTP=none start_strata 20GiB default --store "file://$WORK/old/bucket"
    add_target old "fs.strata.token.file=$WORK/old/meta/token"
    STRATA_DIR=$WORK/new start_strata 20GiB default --store "file://$WORK/new/bucket"
    add_target new "fs.strata.token.file=$WORK/new/meta/token"
    subject=new baseline=old join_args=(--within 10) WRITE_DOC=0 ;;
  *) log "BENCH_COMPARE=$COMPARE: want hdfs, security, metrics or binary"; exit 2 ;;
esac

machine_info
COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- java scripts/bench-hdfs 2>/dev/null || echo " + uncommitted changes")
log "machine: $MACHINE; load average $(cut -d' ' -f1-3 /proc/loadavg)"

log "running FsBench (progress below; results in $WORK/results.tsv)"
run_fsbench 6g "${targets[@]}" \
  --sections "$SECTIONS" --threads "$THREADS" --meta-ops "$META_OPS" --meta-secs "$META_SECS" \
  ${BENCH_META_ONLY:+--meta-only "$BENCH_META_ONLY"} \
  --tree-files "$TREE_FILES" --big-dir "$BIG_DIR" --prep-threads "$PREP_THREADS" \
  --tree-repeat "$TREE_REPEAT" --io-files "$IO_FILES" --io-size "$IO_SIZE" \
  --io-rounds "$IO_ROUNDS" --io-huge-files "$IO_HUGE_FILES" --io-huge-size "$IO_HUGE_SIZE" \
  --small-files "$SMALL_FILES" --small-size "$SMALL_SIZE" --small-threads "$SMALL_THREADS" \
  --out "$WORK/results.tsv" "$@"

java @"$WORK/cp.args" io.strata.bench.Join --subject "$subject" --baseline "$baseline" \
  "${join_args[@]}" "$WORK/results.tsv" >"$WORK/table.txt"
cat "$WORK/table.txt"

if [ "$WRITE_DOC" = 1 ]; then
  scripts/bench-hdfs/splice.sh "$DOC" "$WORK/table.txt" "$COMMAND" "$MACHINE" "$COMMIT"
  log "updated $DOC"
fi
