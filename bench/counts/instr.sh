#!/bin/bash
# User-space instructions per publish request (issue 27), by callgrind: the server runs under
# `valgrind --tool=callgrind`, gets a warm-up of 1,000 requests from bench/counts/nreq.c, its
# counters are zeroed, then exactly N requests (C connections, P in flight per connection) and a
# dump. Prints Ir/request and the dump's path (callgrind_annotate it for the per-function split,
# malloc's call count included). The gateway runs with bench/counts/vgshim.c preloaded (valgrind
# 3.19 otherwise crashes on libdispatch's sigsuspend).
#
#   bench/counts/instr.sh gateway BINARY [N] [C] [P] [extra gateway args…]
#   bench/counts/instr.sh nchan - [N] [C] [P]      # nginx + Nchan, `master_process off` (one process)
#   bench/counts/instr.sh limit - [N] [C] [P]
set -eu
KIND=$1; BIN=$2; N=${3:-2000}; C=${4:-32}; P=${5:-1}; shift 5 2>/dev/null || shift $#
PORT=${PORT:-18182}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/instr-$KIND-$(basename "$BIN")-P$P}
mkdir -p "$OUT"; rm -f "$OUT"/cg.out*
[ -x /tmp/nreq ] || cc -O2 -o /tmp/nreq "$ROOT/bench/counts/nreq.c"
VG=(valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out")
case $KIND in
  gateway)
    [ -e /tmp/vgshim.so ] || cc -O2 -shared -fPIC -o /tmp/vgshim.so "$ROOT/bench/counts/vgshim.c"
    LD_PRELOAD=/tmp/vgshim.so "${VG[@]}" "$BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public" "$@" >"$OUT/log" 2>&1 & SPID=$! ;;
  nchan)
    mkdir -p "$OUT"/{body,proxy,fastcgi,uwsgi,scgi}
    sed -e "s|@DIR@|$OUT|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|1|g" "$ROOT/bench/nchan.conf.template" > "$OUT/nginx.conf"
    "${VG[@]}" nginx -c "$OUT/nginx.conf" -p "$OUT" -g "master_process off;" >"$OUT/log" 2>&1 & SPID=$! ;;
  limit)
    [ -x /tmp/limit ] || gcc -O2 -o /tmp/limit /work/shared/bench/limit.c
    "${VG[@]}" /tmp/limit "$PORT" >"$OUT/log" 2>&1 & SPID=$! ;;
esac
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null' EXIT
for _ in $(seq 1 600); do /tmp/nreq "$PORT" 1 1 >/dev/null 2>&1 && break; sleep 0.2; done
/tmp/nreq "$PORT" 1000 "$C" "$P" >/dev/null
callgrind_control -z "$SPID" >/dev/null
/tmp/nreq "$PORT" "$N" "$C" "$P" >/dev/null
callgrind_control -d "$SPID" >/dev/null
sleep 1
DUMP=$(ls -t "$OUT"/cg.out* | head -1)
IR=$(awk '/^summary:|^totals:/ {print $2; exit}' "$DUMP")
echo "$KIND $(basename "$BIN") N=$N C=$C P=$P: $(awk -v a="$IR" -v n="$N" 'BEGIN {printf "%.0f", a / n}') Ir/request (user space), dump $DUMP"
