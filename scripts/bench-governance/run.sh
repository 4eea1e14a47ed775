#!/usr/bin/env bash
# What quota and ACL checks cost the namespace service: `strata bench meta
# --embedded` creates and renames, run by the binary of BASE (default main:
# before quotas and ACLs) and by this checkout's (after), alternated in one
# sitting, ROUNDS runs of each configuration, the order rotated every round:
#   before    BASE's binary, the superuser (as make bench runs it)
#   after     this checkout's binary, the same run: what the checks cost
#             where no quota or ACL is set
#   user      this checkout's, the threads acting as a user who is not the
#             superuser, in a base directory given to them (mode bits only)
#   governed  the same user in a base directory the superuser keeps (0700)
#             under a name and a space quota, let in by a named-user ACL
#             entry and a default ACL every file and directory inherits:
#             (no default ACL): every create and rename passes the quota
#             checks of its ancestors and the ACL checker
#   inherit   governed, and the base directory has a default ACL every file
#             and directory inherits: an ACL made and stored with each
# Prints one table: each phase and thread count, the median ops/s and CPU
# microseconds per operation of each configuration, and the ratios
# after/before, governed/user and inherit/user. On a busy machine ops/s swing with the
# other work; the CPU per operation is steadier.
#
# Usage: scripts/bench-governance/run.sh   (env BASE=main ROUNDS=3 THREADS=1,16
#        FILES=10000 OPS=create,rename)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d -t strata-bench-governance.XXXXXX)
trap 'rm -rf "$work"' EXIT
base=${BASE:-main} rounds=${ROUNDS:-3} threads=${THREADS:-1,16} files=${FILES:-10000} ops=${OPS:-create,rename}

echo "bench-governance: building $base and this checkout" >&2
mkdir "$work/src"
git archive "$base" | tar -x -C "$work/src"
(cd "$work/src" && go build -o "$work/before" ./cmd/strata)
go build -o "$work/after" ./cmd/strata

# run CONFIG N: one embedded run of CONFIG, its JSON report in $work/CONFIG-N.json.
run() {
  local bin=$work/after extra=()
  case $1 in
    before) bin=$work/before ;;
    user) extra=(--embedded-user strata-bench) ;;
    governed) extra=(--embedded-user strata-bench --governed) ;;
    inherit) extra=(--embedded-user strata-bench --governed --inherit-acl) ;;
  esac
  echo "bench-governance: round $2, $1" >&2
  "$bin" bench meta --embedded "${extra[@]}" --threads "$threads" --files "$files" --ops "$ops" --quiet \
    --json "$work/$1-$2.json" >/dev/null
}

configs=(before after user governed inherit)
for n in $(seq "$rounds"); do
  for i in 0 1 2 3 4; do run "${configs[$(((i + n - 1) % 5))]}" "$n"; done
done

python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
configs = ("before", "after", "user", "governed", "inherit")
res, load = {}, []
for c in configs:
    for n in range(1, rounds + 1):
        r = json.load(open(f"{work}/{c}-{n}.json"))
        machine = r["machine"]
        load.append(machine.get("load_avg", "?").split()[0])
        for x in r["results"]:
            m = res.setdefault((x["op"], x["threads"]), {}).setdefault(c, {"ops": [], "cpu": []})
            m["ops"].append(x["ops_per_sec"])
            m["cpu"].append(1e6 * x["cpu_seconds"] / max(x["ops"], 1))
print(f"strata bench meta --embedded, before (BASE's binary) and after quotas and ACLs, {rounds} alternated runs each, medians;")
print(f"{machine['cpus']} CPUs ({machine.get('cpu_model', '?')}), load average at the runs' starts: {' '.join(load)}")
print("ops/s:")
print(f"{'op':<8}{'threads':>8}" + "".join(f"{c:>10}" for c in configs) + f"{'after/before':>14}{'governed/user':>15}{'inherit/user':>14}")
for (op, t), m in res.items():
    v = {c: statistics.median(m[c]["ops"]) for c in configs}
    print(f"{op:<8}{t:>8}" + "".join(f"{v[c]:>10.0f}" for c in configs) + f"{v['after'] / v['before']:>14.3f}{v['governed'] / v['user']:>15.3f}{v['inherit'] / v['user']:>14.3f}")
print("CPU microseconds per operation (client and service, one process):")
print(f"{'op':<8}{'threads':>8}" + "".join(f"{c:>10}" for c in configs) + f"{'after/before':>14}{'governed/user':>15}{'inherit/user':>14}")
for (op, t), m in res.items():
    v = {c: statistics.median(m[c]["cpu"]) for c in configs}
    print(f"{op:<8}{t:>8}" + "".join(f"{v[c]:>10.1f}" for c in configs) + f"{v['after'] / v['before']:>14.3f}{v['governed'] / v['user']:>15.3f}{v['inherit'] / v['user']:>14.3f}")
PY
