#!/bin/bash
# Scenario 5 of bench/comparison (publish only, keep-alive POSTs, wrk -t1 -c32) against one
# gateway binary, RUNS times: the gateway pinned to CPU 0, wrk to CPU 1, a 2 s warm-up, then
# 10 s measured. Prints requests/s, the gateway's CPU per request (utime + stime from
# /proc/<pid>/stat over the measured run, divided by the requests wrk completed) and the
# 1-minute load average before and after. bench/request-path.md has the figures.
#
# usage: bench/request-path.sh BINARY LABEL [RUNS] [PORT]
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
  taskset -c 0 "$BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public" >/dev/null 2>&1 &
  PID=$!
  for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
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
