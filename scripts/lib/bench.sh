# Shared by the side-by-side benchmark scripts (scripts/bench-*/run.sh), sourced after they set
# BENCH_NAME (the prefix of their messages) and WORK (their scratch directory): logging, the
# processes they start (in pids: stopped on exit, Ctrl-C included), waiting for a server's
# line, Strata's processes and FsBench.

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
  [ "$rc" = 0 ] || log "failed (exit $rc); logs in $WORK"
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

# start_strata CACHE_SIZE NS_CREATE_ARGS...: `strata meta` and `strata worker` as separate
# processes under $WORK, with the namespace `strata admin ns create NS_CREATE_ARGS...` made
# before the worker starts; sets meta (its address), meta_pid and worker_pid.
start_strata() {
  local cache_size=$1
  shift
  log "starting Strata: strata meta and strata worker in $WORK"
  GOMEMLIMIT=4GiB bin/strata meta --data-dir "$WORK/meta" --listen 127.0.0.1:0 2>"$WORK/meta.log" &
  meta_pid=$!
  pids+=("$meta_pid")
  wait_for "$WORK/meta.log" 'strata: serving on' 60 "$meta_pid"
  meta=$(sed -n 's/^strata: serving on //p' "$WORK/meta.log")
  bin/strata admin ns create "$@" --meta "$meta" >&2
  bin/strata worker --meta "$meta" --listen 127.0.0.1:0 --state-dir "$WORK/worker" \
    --cache-dir "$WORK/cache" --cache-size "$cache_size" 2>"$WORK/worker.log" &
  worker_pid=$!
  pids+=("$worker_pid")
  wait_for "$WORK/worker.log" 'serving on' 60 "$worker_pid"
  for _ in $(seq 100); do
    [ "$(bin/strata admin workers --meta "$meta" | wc -l)" -ge 2 ] && break
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
