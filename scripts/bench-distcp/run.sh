#!/usr/bin/env bash
# make bench-distcp: DistCp of many files from HDFS into Strata and back, timed against HDFS to
# HDFS, and getFileChecksum of a large file on both, in one run (docs/benchmarks.md, "DistCp and
# checksums").
#
# Builds bin/strata and the Java modules, starts Strata (`strata meta` and `strata worker`, a
# file:// bucket), then io.strata.compat.DistCpBench, which runs HDFS (MiniDFSCluster: one
# NameNode, one DataNode) and DistCp (the local job runner) in its own JVM. Prints its tables.
#
# Parameters (environment):
#   BENCH_QUICK=1       small sizes for development (1,000 files, a 64 MiB file)
#   BENCH_FILES         files copied (10000); BENCH_MAPS: maps at a time (4)
#   BENCH_ROUNDS        rounds of the copies (1); BENCH_BIG: the checksummed file's size (1g; 0: none)
#   BENCH_WORK          scratch directory (/tmp/strata-bench-distcp): HDFS, the bucket and the cache,
#                       about 3.5 GiB for the 1 GiB file (deleted before the copies) and 2 GiB for
#                       10,000 files (/dev/shm keeps the disk out of the comparison)
#   BENCH_SKIP_BUILD=1  use bin/strata and java/*/target as they are
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${BENCH_QUICK:-0}" = 1 ]; then d_files=1000 d_big=64m; else d_files=10000 d_big=1g; fi
FILES=${BENCH_FILES:-$d_files}
MAPS=${BENCH_MAPS:-4}
ROUNDS=${BENCH_ROUNDS:-1}
BIG=${BENCH_BIG:-$d_big}
WORK=${BENCH_WORK:-/tmp/strata-bench-distcp}

BENCH_NAME=bench-distcp
# shellcheck source=../lib/bench.sh
. scripts/lib/bench.sh
build_all
[ -f java/compat/target/compat.classpath ] || { log "java/compat is not built"; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK"
start_strata 20GiB default --store "file://$WORK/bucket"
machine_info
log "machine: $MACHINE; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# HDFS's and DistCp's INFO lines (several per file and block) would bury the tables, and HDFS's
# audit log would cost it time a real NameNode spends on a file: warnings only, no audit log.
printf '%s\n' 'log4j.rootLogger=WARN, stderr' 'log4j.appender.stderr=org.apache.log4j.ConsoleAppender' \
  'log4j.appender.stderr.Target=System.err' 'log4j.appender.stderr.layout=org.apache.log4j.PatternLayout' \
  'log4j.appender.stderr.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n' \
  'log4j.logger.FSNamesystem.audit=OFF' >"$WORK/log4j.properties"
java -Xmx4g "-Dlog4j.configuration=file:$WORK/log4j.properties" -cp "$ROOT/java/compat/target/classes:$(cat java/compat/target/compat.classpath)" \
  io.strata.compat.DistCpBench --meta "$meta" --base-dir "$WORK" --files "$FILES" --maps "$MAPS" \
  --rounds "$ROUNDS" --big "$BIG" </dev/null &
bench_pid=$!
pids+=("$bench_pid")
wait "$bench_pid"
