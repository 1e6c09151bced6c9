#!/bin/bash
# Load-independent costs of the publish request (issue 27): malloc-family calls and syscalls per request, over exactly N requests from bench/counts/nreq.c
# (keep-alive POST /events/publish-only/<i % 100>, 128-byte body, C connections, P requests in
# flight per connection), after a warm-up of 5,000. The same for any server on PORT:
#
#   bench/counts/count.sh gateway BINARY [N] [C] [P] [extra gateway args…]
#   bench/counts/count.sh nchan - [N] [C] [P]          # Debian nginx + libnginx-mod-nchan, 1 worker
#   bench/counts/count.sh limit - [N] [C] [P]          # /work/shared/bench/limit.c
#
# Also, for the gateway, Swift concurrency runtime calls per request (task allocations,
# executor switches, continuations, jobs run). Needs perf with uprobes on libc's malloc/calloc/realloc/free/posix_memalign (added once with
# `perf probe -x /lib/x86_64-linux-gnu/libc.so.6 --add malloc` etc.; this script adds missing ones)
# and strace (this VM has no hardware counters: instructions come from bench/counts/instr.sh,
# callgrind). Prints one line of per-request figures. Counts, not times: valid on a loaded machine.
set -eu
KIND=$1; BIN=$2; N=${3:-20000}; C=${4:-32}; P=${5:-1}; shift 5 2>/dev/null || shift $#
PORT=${PORT:-18181}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; rm -rf "$TMP"' EXIT
[ -x /tmp/nreq ] || cc -O2 -o /tmp/nreq "$ROOT/bench/counts/nreq.c"
LIBC=/lib/x86_64-linux-gnu/libc.so.6
for f in malloc calloc realloc free posix_memalign; do
  perf probe -l 2>/dev/null | grep -q "probe_libc:$f " || perf probe -q -x $LIBC --add $f >/dev/null 2>&1
done
CONC=/opt/swift/usr/lib/swift/linux/libswift_Concurrency.so
for f in swift_task_alloc swift_task_switch swift_continuation_init swift_job_run; do
  perf probe -l 2>/dev/null | grep -q "probe_libswift_Concurrency:$f " || perf probe -q -x $CONC --add $f >/dev/null 2>&1
done
case $KIND in
  gateway) "$BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public" "$@" >"$TMP/log" 2>&1 & SPID=$! ;;
  nchan)
    mkdir -p "$TMP"/{body,proxy,fastcgi,uwsgi,scgi}
    sed -e "s|@DIR@|$TMP|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|1|g" "$ROOT/bench/nchan.conf.template" > "$TMP/nginx.conf"
    nginx -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/log" 2>&1 & SPID=$! ;;
  limit)
    [ -x /tmp/limit ] || gcc -O2 -o /tmp/limit /work/shared/bench/limit.c
    /tmp/limit "$PORT" >"$TMP/log" 2>&1 & SPID=$! ;;
esac
for _ in $(seq 1 100); do /tmp/nreq "$PORT" 1 1 >/dev/null 2>&1 && break; sleep 0.1; done
# The process that serves: nginx's worker (the master forks it), else the server itself.
WPID=$SPID
[ "$KIND" = nchan ] && WPID=$(pgrep -P "$SPID" | head -1)
/tmp/nreq "$PORT" 5000 "$C" "$P" >/dev/null
EV=probe_libc:malloc,probe_libc:calloc,probe_libc:realloc,probe_libc:free,probe_libc:posix_memalign
SC=probe_libswift_Concurrency
[ "$KIND" = gateway ] && EV=$EV,$SC:swift_task_alloc,$SC:swift_task_switch,$SC:swift_continuation_init,$SC:swift_job_run
perf stat -x, -e "$EV" -p "$WPID" -o "$TMP/stat" -- /tmp/nreq "$PORT" "$N" "$C" "$P" >/dev/null
strace -c -f -p "$WPID" -o "$TMP/strace" 2>/dev/null & TPID=$!
sleep 1
/tmp/nreq "$PORT" "$N" "$C" "$P" >/dev/null
sleep 0.2; kill -INT $TPID; wait $TPID 2>/dev/null || true
val() { awk -F, -v e="$1" '$3 ~ e {print $1}' "$TMP/stat"; }
per() { awk -v a="$1" -v n="$N" 'BEGIN {printf "%.2f", a / n}'; }
ALLOC=$(( $(val malloc) + $(val calloc) + $(val realloc) + $(val posix_memalign) ))
SYS=$(awk '$NF == "total" {print $4}' "$TMP/strace")
MPROT=$(awk '$NF == "mprotect" {print $4}' "$TMP/strace"); MPROT=${MPROT:-0}
CALLS=$(awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && $NF != "total" {printf "%s %s, ", $NF, $4}' "$TMP/strace")
echo "$KIND $(basename "$BIN") N=$N C=$C P=$P:" \
     "allocs/req $(per $ALLOC) (frees $(per "$(val free)")), syscalls/req $(per "$SYS"), mprotect/req $(per $MPROT)"
[ "$KIND" = gateway ] && echo "  per request: task_alloc $(per "$(val swift_task_alloc)"), task_switch $(per "$(val swift_task_switch)"), continuation_init $(per "$(val swift_continuation_init)"), job_run $(per "$(val swift_job_run)")"
echo "  syscalls: $CALLS"
