#!/usr/bin/env bash
# What the metrics cost the namespace service: `strata bench meta --embedded`
# (the member in the benchmark's process, so that its cpu column holds the
# service's CPU too) without metrics, and with them (--embedded-metrics: the
# metrics `strata meta` collects, gathered every 5 s), alternated in one
# sitting, ROUNDS runs of each, the order flipped every round. Prints one table:
# each phase and thread count, the median ops/s and CPU microseconds per
# operation of each, and their ratios (with metrics / without). On a busy
# machine ops/s swing with the other work; the CPU per operation is steadier.
#
# Usage: scripts/bench-metrics/run.sh   (env ROUNDS=3 THREADS=1,16,64 FILES=20000
#        OPS=create,stat,list,rename,delete; BENCH_SKIP_BUILD=1 uses bin/strata as it is)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d -t strata-bench-metrics.XXXXXX)
trap 'rm -rf "$work"' EXIT
rounds=${ROUNDS:-3} threads=${THREADS:-1,16,64} files=${FILES:-20000} ops=${OPS:-create,stat,list,rename,delete}
[ "${BENCH_SKIP_BUILD:-0}" = 1 ] || make build >&2

# run MODE N: one embedded run, metrics MODE (off or on), its JSON report in $work/MODE-N.json.
run() {
  local extra=()
  [ "$1" = on ] && extra=(--embedded-metrics)
  echo "bench-metrics: round $2, metrics $1" >&2
  bin/strata bench meta --embedded "${extra[@]}" --threads "$threads" --files "$files" --ops "$ops" --quiet \
    --json "$work/$1-$2.json" >/dev/null
}

for n in $(seq "$rounds"); do
  if ((n % 2)); then run off "$n"; run on "$n"; else run on "$n"; run off "$n"; fi
done

python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
res, load = {}, []
for mode in ("off", "on"):
    for n in range(1, rounds + 1):
        r = json.load(open(f"{work}/{mode}-{n}.json"))
        machine = r["machine"]
        load.append(machine.get("load_avg", "?").split()[0])
        for x in r["results"]:
            m = res.setdefault((x["op"], x["threads"]), {}).setdefault(mode, {"ops": [], "cpu": []})
            m["ops"].append(x["ops_per_sec"])
            m["cpu"].append(1e6 * x["cpu_seconds"] / max(x["ops"], 1))
print(f"strata bench meta --embedded, metrics off and on (--embedded-metrics), {rounds} alternated runs each, medians;")
print(f"{machine['cpus']} CPUs ({machine.get('cpu_model', '?')}), load average at the runs' starts: {' '.join(load)}")
print(f"{'op':<8}{'threads':>8}{'ops/s off':>11}{'ops/s on':>10}{'on/off':>8}{'cpu us/op off':>15}{'on':>8}{'on/off':>8}")
for (op, t), m in res.items():
    o, n = m["off"], m["on"]
    oo, no = statistics.median(o["ops"]), statistics.median(n["ops"])
    oc, nc = statistics.median(o["cpu"]), statistics.median(n["cpu"])
    print(f"{op:<8}{t:>8}{oo:>11.0f}{no:>10.0f}{no / oo:>8.2f}{oc:>15.1f}{nc:>8.1f}{nc / oc:>8.2f}")
PY
