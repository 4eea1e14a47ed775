# Sourced by the benchmark scripts that run MinIO (scripts/bench-*/run.sh), after they define
# log and pids (scripts/lib/bench.sh does).

# start_minio DIR KEY SECRET: MinIO ($MINIO) serving DIR (each top-level directory a bucket) on
# a free port of 127.0.0.1, with KEY and SECRET as its root user; logs in DIR.log; waits until
# it is healthy; sets minio_port and minio_pid.
start_minio() {
  minio_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  MINIO_ROOT_USER=$2 MINIO_ROOT_PASSWORD=$3 MINIO_BROWSER=off MINIO_UPDATE=off \
    "$MINIO" server --address "127.0.0.1:$minio_port" --console-address 127.0.0.1:0 "$1" \
    >"$1.log" 2>&1 &
  minio_pid=$!
  pids+=("$minio_pid")
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$minio_port/minio/health/cluster" >/dev/null && return 0
    kill -0 "$minio_pid" 2>/dev/null || { log "MinIO exited:"; tail -20 "$1.log" >&2; return 1; }
    sleep 0.1
  done
  log "MinIO is not healthy after 60 s:"; tail -20 "$1.log" >&2; return 1
}
