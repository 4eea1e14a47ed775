#!/usr/bin/env bash
# What the metrics cost the namespace service: `strata bench meta` against a
# `strata meta` that serves no metrics (--http-listen off: none collected,
# slow calls logged all the same) and one that does (its /metrics scraped every
# 5 s meanwhile, three times as often as Prometheus' default), alternated in
# one sitting, ROUNDS of each. Prints one table: each phase and thread count,
# the median ops/s of each, and their ratio (with metrics / without).
#
# Usage: scripts/bench-metrics/run.sh   (env ROUNDS=3 THREADS=1,16,64 FILES=20000
#        OPS=create,stat,list,rename,delete; BENCH_SKIP_BUILD=1 uses bin/strata as it is)
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH_NAME=bench-metrics
WORK=$(mktemp -d -t strata-bench-metrics.XXXXXX)
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

rounds=${ROUNDS:-3} threads=${THREADS:-1,16,64} files=${FILES:-20000} ops=${OPS:-create,stat,list,rename,delete}
[ "${BENCH_SKIP_BUILD:-0}" = 1 ] || make build >&2

# run MODE N: one `strata meta` with metrics MODE (off or on), one bench run on
# it, its JSON report in $WORK/MODE-N.json.
run() {
  local mode=$1 n=$2 dir="$WORK/$1-$2" http=(--http-listen off)
  [ "$mode" = on ] && http=(--http-listen 127.0.0.1:0)
  mkdir -p "$dir"
  GOMEMLIMIT=4GiB bin/strata meta --data-dir "$dir/meta" --listen 127.0.0.1:0 "${http[@]}" 2>"$dir/meta.log" &
  local pid=$!
  pids+=("$pid")
  wait_for "$dir/meta.log" 'strata: serving on' 60 "$pid"
  local addr scraper=""
  addr=$(sed -n 's/^strata: serving on //p' "$dir/meta.log")
  STRATA_DIR=$dir use_meta_token
  bin/strata admin ns create default --store "file://$dir/bucket" --meta "$addr" >&2
  if [ "$mode" = on ]; then
    local web
    web=$(sed -n 's/^strata: http on \([^ ]*\).*/\1/p' "$dir/meta.log")
    (while kill -0 "$pid" 2>/dev/null; do curl -sf "http://$web/metrics" >/dev/null || true; sleep 5; done) &
    scraper=$!
  fi
  log "round $n, metrics $mode: strata bench meta --threads $threads --files $files --ops $ops"
  bin/strata bench meta --meta "$addr" --threads "$threads" --files "$files" --ops "$ops" --quiet \
    --json "$WORK/$mode-$n.json" >/dev/null
  [ -z "$scraper" ] || kill "$scraper" 2>/dev/null || true
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir/meta" "$dir/bucket"
}

for n in $(seq "$rounds"); do
  # Alternated, and the order flipped each round, so that a drift of the
  # machine (other work, a warming disk) falls on both alike.
  if ((n % 2)); then run off "$n"; run on "$n"; else run on "$n"; run off "$n"; fi
done

python3 - "$WORK" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
res = {}
machine = None
for mode in ("off", "on"):
    for n in range(1, rounds + 1):
        r = json.load(open(f"{work}/{mode}-{n}.json"))
        machine = r["machine"]
        for x in r["results"]:
            res.setdefault((x["op"], x["threads"]), {}).setdefault(mode, []).append(x["ops_per_sec"])
print(f"strata bench meta, metrics off and on, {rounds} alternated rounds each (median ops/s); "
      f"{machine['cpus']} CPUs, {machine.get('cpu_model', '')}, load {machine.get('load_avg', '')}")
print(f"{'op':<10}{'threads':>8}{'off ops/s':>12}{'on ops/s':>12}{'on/off':>8}   runs off / on")
for (op, t), m in res.items():
    off, on = statistics.median(m["off"]), statistics.median(m["on"])
    runs = " ".join(f"{v:.0f}" for v in m["off"]) + " / " + " ".join(f"{v:.0f}" for v in m["on"])
    print(f"{op:<10}{t:>8}{off:>12.0f}{on:>12.0f}{on / off:>8.2f}   {runs}")
PY
