#!/bin/bash
# What a second event loop costs per publish request (issue 27): the gateway unpinned with
# --loops L, `wrk -t1 -c32` publish-only for 10 s (after 2 s of warm-up), and per request:
# the server's CPU (user + system, /proc/<pid>/stat), its context switches, and its
# epoll_wait, eventfd write (a parked loop woken), read and writev calls (perf stat on the
# syscall tracepoints). Timed, so run it on a quiet machine, alternating L:
#
#   for L in 1 2 1 2; do bench/counts/loops.sh .build/release/sse-gateway $L; done
#
# The same for nginx + Nchan with L workers (what a second worker costs nginx here):
#
#   for L in 1 2 1 2; do bench/counts/loops.sh nchan $L; done
set -eu
BIN=$1; L=$2
PORT=${PORT:-18190}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
if [ "$BIN" = nchan ]; then
  mkdir -p "$TMP"/{body,proxy,fastcgi,uwsgi,scgi}
  sed -e "s|@DIR@|$TMP|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|$L|g" "$ROOT/bench/nchan.conf.template" > "$TMP/nginx.conf"
  nginx -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/log" 2>&1 & GW=$!
else
  "$BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public" --loops "$L" >"$TMP/log" 2>&1 & GW=$!
fi
trap 'kill $GW 2>/dev/null; wait $GW 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
# The processes that serve: nginx's workers (its master only forks them), else the gateway.
PIDS=$GW
[ "$BIN" = nchan ] && PIDS=$(pgrep -d, -P "$GW")
cpu() { local t=0; for p in ${PIDS//,/ }; do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
cat >"$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = string.rep("x", 128)
wrk.headers["Content-Type"] = "text/plain"
local i = 0
request = function() i = i + 1; return wrk.format(nil, "/events/publish-only/" .. (i % 100)) end
LUA
wrk -t1 -c32 -d2s -s "$TMP/post.lua" "http://127.0.0.1:$PORT" >/dev/null 2>&1
c0=$(cpu)
perf stat -x, -o "$TMP/stat" -p "$PIDS" -e context-switches,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_writev -- sleep 10 &
PS=$!
wrk -t1 -c32 -d10s -s "$TMP/post.lua" "http://127.0.0.1:$PORT" >"$TMP/wrk" 2>&1
wait $PS
c1=$(cpu)
python3 - "$(awk '/Requests\/sec/{print $2}' "$TMP/wrk")" "$c0" "$c1" "$L" "$TMP/stat" "$([ "$BIN" = nchan ] && echo "nchan, workers" || echo "--loops")" <<'PY'
import sys
rps, c0, c1 = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
n = rps * 10
line = [f"{sys.argv[6]} {sys.argv[4]}: {rps:,.0f} requests/s, server CPU {(c1 - c0) / 100 / n * 1e6:.1f} us/request"]
for row in open(sys.argv[5]):
    f = row.strip().split(',')
    if len(f) > 3 and f[0].replace('.', '').isdigit():
        name = f[2].replace('syscalls:sys_enter_', '')
        if name == 'write' and sys.argv[6] == '--loops': name = 'write (eventfd)'  # the gateway's only write: a parked loop woken
        line.append(f"{name} {float(f[0]) / n:.3f}")
print('; '.join(line) + ' per request')
PY
