#!/usr/bin/env bash
# The production shape on loopback, without Docker: redis-server, the mock upstream, N gateway
# replicas and nginx in front of them with the same configuration as docker-compose.yml
# (deploy/nginx/sluice.conf.template).
#
#   deploy/fleet.sh up [N]      start, print the URLs, wait; Ctrl-C stops everything (make fleet)
#   deploy/fleet.sh start [N]   start in the background and return (tests)
#   deploy/fleet.sh stop        stop everything started in FLEET_DIR (make fleet-stop)
#
# FLEET_DIR (default /tmp/sluice-fleet) holds the binaries, configs, logs and pid files;
# FLEET_PORT (default 8090) is nginx's port, the replicas take the next N ports and the mock
# the one after. SLUICE_ADMIN_TOKEN defaults to "fleet-admin". Everything listens on 127.0.0.1.
# FLEET_CONFIG (default deploy/fleet.yaml) is the replicas' configuration: test/fleet's cluster
# form passes one naming a Redis Cluster and upstreams of its own instead of the ones started here.
# SLUICE_REDIS_SERVER (default redis-server) is the server started, valkey-server for Valkey.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${FLEET_DIR:-/tmp/sluice-fleet}"
port="${FLEET_PORT:-8090}"
token="${SLUICE_ADMIN_TOKEN:-fleet-admin}"
config="${FLEET_CONFIG:-$here/fleet.yaml}"
redis_server="${SLUICE_REDIS_SERVER:-redis-server}"

stop() {
  [[ -d "$dir/pids" ]] || return 0
  # Gateways first (they drain their streams), then nginx, the mock and Redis.
  for f in "$dir"/pids/gateway-*.pid "$dir"/pids/nginx.pid "$dir"/pids/mock.pid "$dir"/pids/redis.pid; do
    [[ -f "$f" ]] || continue
    pid="$(cat "$f")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

wait_http() { # url: wait until it answers 200, at most 10 s
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "fleet: $1 did not come up; logs in $dir/logs" >&2
  return 1
}

start() {
  local n="${1:-3}"
  for bin in "$redis_server" nginx curl; do
    command -v "$bin" >/dev/null || { echo "fleet: $bin is not installed (apt-get install -y redis-server nginx curl)" >&2; exit 1; }
  done
  stop
  mkdir -p "$dir"/{bin,pids,logs,nginx}
  (cd "$root" && go build -o "$dir/bin/" ./cmd/gateway ./cmd/mockllm)

  "$redis_server" --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 --save '' \
    --appendonly no --dir "$dir" >"$dir/logs/redis.log" 2>&1 &
  echo $! >"$dir/pids/redis.pid"
  for _ in $(seq 1 100); do [[ -S "$dir/redis.sock" ]] && break; sleep 0.1; done

  local mock="127.0.0.1:$((port + n + 1))"
  "$dir/bin/mockllm" -addr "$mock" -quiet >"$dir/logs/mock.log" 2>&1 &
  echo $! >"$dir/pids/mock.pid"

  local ups=""
  for i in $(seq 1 "$n"); do
    local addr="127.0.0.1:$((port + i))"
    SLUICE_LISTEN="$addr" SLUICE_REPLICA="gateway-$i" SLUICE_ADMIN_TOKEN="$token" \
      SLUICE_REDIS_URL="unix://$dir/redis.sock" MOCK_URL="http://$mock" \
      "$dir/bin/gateway" --config "$config" --grace 20s >"$dir/logs/gateway-$i.log" 2>&1 &
    echo $! >"$dir/pids/gateway-$i.pid"
    ups+="server $addr; "
  done

  sed -e "s|\${SLUICE_LISTEN}|127.0.0.1:$port|" -e "s|\${SLUICE_UPSTREAMS}|$ups|" \
    "$here/nginx/sluice.conf.template" >"$dir/nginx/sluice.conf"
  cat >"$dir/nginx/nginx.conf" <<EOF
daemon off;
pid $dir/nginx/nginx.pid;
error_log $dir/logs/nginx.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/nginx/body;
  proxy_temp_path $dir/nginx/proxy;
  fastcgi_temp_path $dir/nginx/fastcgi;
  uwsgi_temp_path $dir/nginx/uwsgi;
  scgi_temp_path $dir/nginx/scgi;
  include $dir/nginx/sluice.conf;
}
EOF
  nginx -c "$dir/nginx/nginx.conf" -p "$dir/nginx" >"$dir/logs/nginx.out" 2>&1 &
  echo $! >"$dir/pids/nginx.pid"

  wait_http "http://$mock/v1/models"
  for i in $(seq 1 "$n"); do wait_http "http://127.0.0.1:$((port + i))/readyz"; done
  wait_http "http://127.0.0.1:$port/readyz"
  echo "fleet: $n replicas behind nginx at http://127.0.0.1:$port (admin token: $token)"
  for i in $(seq 1 "$n"); do echo "  gateway-$i  http://127.0.0.1:$((port + i))"; done
  echo "  mock       http://$mock"
  echo "  redis      unix://$dir/redis.sock"
  echo "  logs       $dir/logs"
}

case "${1:-}" in
  up)
    trap 'echo; echo "fleet: stopping"; stop; exit 0' INT TERM
    start "${2:-3}"
    echo "fleet: Ctrl-C stops everything"
    while sleep 3600; do :; done
    ;;
  start) start "${2:-3}" ;;
  stop) stop ;;
  *) echo "usage: $0 up|start [N] | stop" >&2; exit 2 ;;
esac
