#!/usr/bin/env bash
# A large file read short-circuit (`strata fs -cat`, warm: every block in the worker's
# cache) by a client on the worker's host (its network namespace and host name) and by
# a client in a container's place: a network namespace and UTS host name of its own,
# the worker's socket directory bind-mounted at another path (STRATA_SC_DIR), the
# service reached over a veth pair. The two alternate, RUNS times each; each run's
# MB/s is printed, then the worker's counters (RPC-READ stays 0: every byte of both
# went short-circuit). Issue 40: short-circuit across container boundaries within
# noise of the same host.
#
# Usage (as root; ip, nsenter, unshare): make build && scripts/bench-netns/run.sh
#   SIZE_MB (2048), RUNS (3), BENCH_WORK (/tmp/strata-bench-netns, removed at the end
#   unless BENCH_KEEP=1: the file is in the bucket and the cache, twice its size)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin/strata
W=${BENCH_WORK:-/tmp/strata-bench-netns}
SIZE_MB=${SIZE_MB:-2048}
RUNS=${RUNS:-3}
cleanup() {
  [ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null || true
  [ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null || true
  wait 2>/dev/null || true
  umount -l "$W/mnt" 2>/dev/null || true
  umount -l "$W/uts" 2>/dev/null || true
  ip netns del nsbench 2>/dev/null || true
  ip link del vbench0 2>/dev/null || true
}
trap 'cleanup; [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$W"' EXIT
cleanup
rm -rf "$W"; mkdir -p "$W/run" "$W/mnt"; chmod 700 "$W"
ip netns add nsbench
ip link add vbench0 type veth peer name vbench1
ip link set vbench1 netns nsbench
ip addr add 10.251.251.1/24 dev vbench0; ip link set vbench0 up
ip -n nsbench addr add 10.251.251.2/24 dev vbench1; ip -n nsbench link set vbench1 up; ip -n nsbench link set lo up
touch "$W/uts"; unshare --uts="$W/uts" hostname pod-7f9c
mount --bind "$W/run" "$W/mnt"
M=10.251.251.1:7700
"$BIN" meta --listen $M --data-dir "$W/meta" --plaintext --http-listen off >"$W/meta.log" 2>&1 & mpid=$!
for i in $(seq 100); do [ -s "$W/meta/token" ] && break; sleep 0.1; done
export STRATA_META=$M STRATA_PLAINTEXT=1 STRATA_TOKEN; STRATA_TOKEN=$(cat "$W/meta/token")
"$BIN" admin ns create default --store "file://$W/bucket" >/dev/null
"$BIN" worker --meta $M --listen 10.251.251.1:7701 --state-dir "$W/worker" --cache-dir "$W/cache" --cache-size 8GiB \
  --unix-socket "$W/run/worker.sock" --token-file "$W/meta/token" --plaintext --http-listen off >"$W/worker.log" 2>&1 & wpid=$!
for i in $(seq 100); do [ -S "$W/run/worker.sock" ] && break; sleep 0.1; done
for i in $(seq 100); do "$BIN" admin workers 2>/dev/null | grep -q '^ *w-' && break; sleep 0.1; done # its first heartbeat
head -c $((SIZE_MB << 20)) /dev/urandom >"$W/big"
"$BIN" fs -put "$W/big" /big
rm "$W/big"
"$BIN" fs -cat /big >/dev/null # warm: every block in the cache
echo "host: $(hostname); pod: $(nsenter --uts="$W/uts" hostname); load: $(cut -d' ' -f1-3 /proc/loadavg)"
mbps() { # CMD...: runs it, prints the MB/s of SIZE_MB
  local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
  echo $((SIZE_MB * 1000000000 / (e - s)))
}
for r in $(seq "$RUNS"); do
  echo "same-host $(mbps "$BIN" fs -cat /big) MB/s"
  echo "pod       $(mbps nsenter --net=/run/netns/nsbench --uts="$W/uts" env STRATA_SC_DIR="$W/mnt" "$BIN" fs -cat /big) MB/s"
done
"$BIN" admin workers
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
