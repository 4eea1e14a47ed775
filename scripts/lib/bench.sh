# Shared by the side-by-side benchmark scripts (scripts/bench-*/run.sh), sourced after they set
# BENCH_NAME (the prefix of their messages) and WORK (their scratch directory): logging, the
# processes they start (in pids: stopped on exit, Ctrl-C included), waiting for a server's
# line, building, HDFS's and Strata's processes, the machine's description and FsBench.

# The servers this script starts, and their clients, run in plaintext unless
# STRATA_PLAINTEXT=0 and STRATA_TLS_CERT, STRATA_TLS_KEY and STRATA_TLS_CA name a
# certificate, its key and its CA (docs/security.md).
export STRATA_PLAINTEXT="${STRATA_PLAINTEXT:-1}"
log() { echo "$BENCH_NAME: $*" >&2; }

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
  if [ "$rc" = 0 ] && [ "${BENCH_KEEP:-0}" != 1 ]; then
    # The data (buckets, caches, the services' state: gigabytes a run) goes;
    # the logs and results stay. BENCH_KEEP=1, or a failed run, keeps it all.
    local d
    for d in "$WORK" "$WORK/secure" "$WORK/plain"; do
      rm -rf "$d/bucket" "$d/cache" "$d/worker" "$d/meta" "$d/hdfs" "$d/minio" 2>/dev/null || true
    done
  fi
  [ "$rc" = 0 ] || log "failed (exit $rc); logs and data in $WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for FILE PATTERN SECONDS PID: until FILE has a line matching PATTERN, or PID dies.
wait_for() {
  for _ in $(seq $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { log "$1: the process exited:"; tail -20 "$1" >&2; return 1; }
    sleep 0.1
  done
  log "$1: no '$2' after $3 s:"; tail -20 "$1" >&2; return 1
}

# use_meta_token: waits until the leader of the `strata meta` in ${STRATA_DIR:-$WORK}/meta wrote
# its superuser's token (docs/security.md), then has the CLI, the worker and the Java clients
# (FsBench, Spark) started from here find it: STRATA_TOKEN_FILE.
use_meta_token() {
  local file=${STRATA_DIR:-$WORK}/meta/token
  for _ in $(seq 300); do
    [ -s "$file" ] && break
    sleep 0.1
  done
  [ -s "$file" ] || { log "strata meta wrote no token in ${file%/token}"; return 1; }
  export STRATA_TOKEN_FILE="$file"
}

# start_strata CACHE_SIZE NS_CREATE_ARGS...: `strata meta` and `strata worker` as separate
# processes under $STRATA_DIR (default $WORK), with the namespace `strata admin ns create
# NS_CREATE_ARGS...` made before the worker starts; sets meta (its address), meta_pid and
# worker_pid. STRATA_SECURITY says how they run: default (tokens on, plaintext unless
# STRATA_PLAINTEXT=0 says otherwise), on (tokens and TLS, on a CA and certificate made in
# STRATA_DIR/tls by `strata admin cert create`; its CLI calls and this script's later ones use
# them) or off (--insecure-no-auth and plaintext).
start_strata() {
  local cache_size=$1
  shift
  local dir=${STRATA_DIR:-$WORK} security=${STRATA_SECURITY:-default}
  local env=() meta_args=()
  case "$security" in
    default) ;;
    on)
      bin/strata admin cert create "$dir/tls" >/dev/null
      env=(STRATA_PLAINTEXT=0 "STRATA_TLS_CERT=$dir/tls/cert.pem" "STRATA_TLS_KEY=$dir/tls/key.pem"
        "STRATA_TLS_CA=$dir/tls/ca.pem") ;;
    off) env=(STRATA_PLAINTEXT=1) meta_args=(--insecure-no-auth) ;;
    *) log "STRATA_SECURITY=$security: want default, on or off"; return 1 ;;
  esac
  log "starting Strata: strata meta and strata worker in $dir (security: $security)"
  mkdir -p "$dir"
  # STRATA_HTTP: the processes' --http-listen (default: any free port; off:
  # no metrics, none collected).
  # STRATA_BIN: the binary of the meta and worker processes (default bin/strata); one
  # from before --http-listen takes STRATA_HTTP=none.
  local http=(--http-listen "${STRATA_HTTP:-127.0.0.1:0}") bin=${STRATA_BIN:-bin/strata}
  [ "${STRATA_HTTP:-}" != none ] || http=()
  env "${env[@]}" GOMEMLIMIT=4GiB "$bin" meta --data-dir "$dir/meta" --listen 127.0.0.1:0 \
    "${meta_args[@]}" "${http[@]}" 2>"$dir/meta.log" &
  meta_pid=$!
  pids+=("$meta_pid")
  wait_for "$dir/meta.log" 'strata: serving on' 60 "$meta_pid"
  meta=$(sed -n 's/^strata: serving on //p' "$dir/meta.log")
  if [ "$security" != off ]; then
    STRATA_DIR=$dir use_meta_token
  fi
  env "${env[@]}" bin/strata admin ns create "$@" --meta "$meta" >&2
  env "${env[@]}" "$bin" worker --meta "$meta" --listen 127.0.0.1:0 --state-dir "$dir/worker" \
    --cache-dir "$dir/cache" --cache-size "$cache_size" "${http[@]}" 2>"$dir/worker.log" &
  worker_pid=$!
  pids+=("$worker_pid")
  wait_for "$dir/worker.log" 'serving on' 60 "$worker_pid"
  for _ in $(seq 100); do
    [ "$(env "${env[@]}" bin/strata admin workers --meta "$meta" | wc -l)" -ge 2 ] && break
    sleep 0.1
  done
}

# run_fsbench HEAP ARGS...: io.strata.bench.FsBench ARGS with the classpath of $WORK/cp.args,
# its progress on stderr (the result rows go to the --out file only); fails if it fails. In the
# background, so that a signal to the script is handled at once (bash runs traps only between
# foreground commands) and FsBench is stopped with the rest.
run_fsbench() {
  local heap=$1
  shift
  : >"$WORK/fsbench.log" # before tail -f below opens it
  java -Xmx"$heap" @"$WORK/cp.args" io.strata.bench.FsBench "$@" >"$WORK/fsbench.log" 2>&1 \
    </dev/null &
  local bench_pid=$!
  pids+=("$bench_pid")
  tail -n +1 -f --pid="$bench_pid" "$WORK/fsbench.log" \
    | grep --line-buffered -v $'^fsbench: [a-z0-9]*\t' >&2 &
  wait "$bench_pid" || { log "FsBench failed"; exit 1; }
}

# build_all: bin/strata and the Java modules, unless BENCH_SKIP_BUILD=1.
build_all() {
  if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
    log "building bin/strata and the Java modules"
    make build >&2
    (cd java && ./mvn.sh -q install -DskipTests) >&2
  fi
}

# start_minihdfs HEAP [MiniHdfs arguments]: HDFS (MiniDFSCluster) in its own JVM in $WORK/hdfs,
# with java/bench's classpath ($WORK/cp.args); sets hdfs_pid (its URI comes in $WORK/hdfs.uri).
start_minihdfs() {
  local heap=$1
  shift
  log "starting HDFS (MiniDFSCluster) in $WORK/hdfs"
  java "-Xmx$heap" @"$WORK/cp.args" io.strata.bench.MiniHdfs --base-dir "$WORK/hdfs" \
    --exit-with $$ "$@" >"$WORK/hdfs.uri" 2>"$WORK/hdfs.log" </dev/null &
  hdfs_pid=$!
  pids+=("$hdfs_pid")
}

# machine_info: sets MACHINE, the machine for the doc's header.
machine_info() {
  local cpu_model mem disk_dev disk_size disk_fs blk rot disk_kind
  cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
  disk_dev=$(df --output=source "$WORK" | tail -1)
  disk_size=$(df -h --output=size "$WORK" | tail -1 | tr -d ' ')
  disk_fs=$(df --output=fstype "$WORK" | tail -1)
  blk=$(basename "$disk_dev")
  rot=$(cat "/sys/block/$blk/queue/rotational" 2>/dev/null || echo "?")
  case "$rot" in 0) disk_kind="not rotational";; 1) disk_kind=rotational;; *) disk_kind="kind unknown";; esac
  MACHINE="$(nproc) cores ($cpu_model), $mem memory, disk $disk_dev $disk_size $disk_fs ($disk_kind); $(uname -sr); $(java -version 2>&1 | head -1); $(go version 2>/dev/null | cut -d' ' -f3)"
}
