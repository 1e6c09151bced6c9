#!/bin/bash
# Scenario 5 of bench/comparison (publish only, keep-alive POSTs, wrk -t1 -c32) against one
# server, RUNS times: the server pinned to CPU 0, wrk to CPU 1, a 2 s warm-up, then 10 s
# measured. Prints requests/s, the server's CPU per request (utime + stime from
# /proc/<pid>/stat over the measured run, divided by the requests wrk completed) and the
# 1-minute load average before and after. bench/request-path.md has the figures.
#
# usage: bench/request-path.sh BINARY LABEL [RUNS] [PORT]     a gateway binary (--loops 1)
#        bench/request-path.sh nchan LABEL [RUNS] [PORT]      Debian nginx + libnginx-mod-nchan, 1 worker
#        bench/request-path.sh limit LABEL [RUNS] [PORT]      /work/shared/bench/limit.c
# The timed side by side of issue 27, on a quiet machine (alternate the three, twice each):
#   for i in 1 2; do for s in .build/release/sse-gateway nchan limit; do bench/request-path.sh $s $s 1; done; done
# Timed figures are meaningless while other work shares the cores; bench/counts/ has the
# load-independent counts (instructions, allocations, syscalls per request).
set -eu
BIN=$1; LABEL=$2; RUNS=${3:-3}; PORT=${4:-18080}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT=$(mktemp --suffix=.lua)
trap 'rm -f "$SCRIPT"' EXIT
# The script bench/comparison/scenarios.py writes for scenario 5.
cat > "$SCRIPT" <<'LUA'
wrk.method = "POST"
wrk.body = string.rep("x", 128)
wrk.headers["Content-Type"] = "text/plain"
wrk.headers["Accept"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "/events/publish-only/" .. (n % 100))
end
LUA
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for i in $(seq 1 "$RUNS"); do
  case $BIN in
    nchan)
      DIR=$(mktemp -d); mkdir -p "$DIR"/{body,proxy,fastcgi,uwsgi,scgi}
      sed -e "s|@DIR@|$DIR|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|1|g" "$ROOT/bench/nchan.conf.template" > "$DIR/nginx.conf"
      taskset -c 0 nginx -c "$DIR/nginx.conf" -p "$DIR" -g "master_process off;" >/dev/null 2>&1 & ;;
    limit)
      [ -x /tmp/limit ] || gcc -O2 -o /tmp/limit /work/shared/bench/limit.c
      taskset -c 0 /tmp/limit "$PORT" >/dev/null 2>&1 & ;;
    *) taskset -c 0 "$BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public" --loops 1 >/dev/null 2>&1 & ;;
  esac
  PID=$!
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
  taskset -c 1 wrk -t1 -c32 -d2s -s "$SCRIPT" "http://127.0.0.1:$PORT" >/dev/null
  L0=$(cut -d' ' -f1 /proc/loadavg); C0=$(cpu $PID)
  OUT=$(taskset -c 1 wrk -t1 -c32 -d10s -s "$SCRIPT" "http://127.0.0.1:$PORT")
  C1=$(cpu $PID); L1=$(cut -d' ' -f1 /proc/loadavg)
  RPS=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
  N=$(echo "$OUT" | awk '/requests in/ {print $1}')
  US=$(awk -v c=$((C1 - C0)) -v n="$N" -v t="$TCK" 'BEGIN {printf "%.1f", c / t * 1e6 / n}')
  ERR=$(echo "$OUT" | grep -E "Non-2xx|Socket errors" | tr '\n' ' ' || true)
  echo "$LABEL run $i: $RPS req/s, $US µs CPU/request, load(1m) $L0 -> $L1 $ERR"
  kill $PID; wait $PID 2>/dev/null || true
done
