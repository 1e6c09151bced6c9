#!/bin/bash
# Per-delivery costs of fan-out (issue 27): S subscribers on one topic, N publishes from one
# publisher (bench/counts/nfan.c), counted from the moment every stream has begun until every
# delivery arrived. MODE counts: malloc-family calls, Swift runtime calls and syscalls (perf
# uprobes + strace -c, as count.sh); MODE instr: user-space instructions (callgrind, as instr.sh).
#
#   bench/counts/fan.sh counts|instr gateway BINARY [S] [N] [extra gateway args…]
#   bench/counts/fan.sh counts|instr limit - [S] [N]
#   bench/counts/fan.sh counts|instr nchan - [S] [N]
set -eu
MODE=$1; KIND=$2; BIN=$3; S=${4:-1000}; N=${5:-20}; shift 5 2>/dev/null || shift $#
PORT=${PORT:-18281}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
[ -x /tmp/nfan ] || cc -O2 -o /tmp/nfan "$ROOT/bench/counts/nfan.c"
PRE=()
if [ "$MODE" = instr ]; then
  [ -e /tmp/vgshim.so ] || cc -O2 -shared -fPIC -o /tmp/vgshim.so "$ROOT/bench/counts/vgshim.c"
  PRE=(valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out")
fi
case $KIND in
  gateway) LD_PRELOAD=${PRE:+/tmp/vgshim.so} "${PRE[@]}" "$BIN" --host 127.0.0.1 --port "$PORT" "$@" >"$TMP/log" 2>&1 & SPID=$! ;;
  limit) [ -x /tmp/limit ] || gcc -O2 -o /tmp/limit /work/shared/bench/limit.c
         "${PRE[@]}" /tmp/limit "$PORT" >"$TMP/log" 2>&1 & SPID=$! ;;
  nchan) mkdir -p "$TMP"/{body,proxy,fastcgi,uwsgi,scgi}
         sed -e "s|@DIR@|$TMP|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|1|g" "$ROOT/bench/nchan.conf.template" > "$TMP/nginx.conf"
         "${PRE[@]}" nginx -c "$TMP/nginx.conf" -p "$TMP" -g "master_process off;" >"$TMP/log" 2>&1 & SPID=$! ;;
esac
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.2; done
coproc FAN { /tmp/nfan "$PORT" "$S" "$N"; }
read -r line <&"${FAN[0]}"; [ "$line" = ready ] || { echo "nfan: $line"; exit 1; }
if [ "$MODE" = instr ]; then
  callgrind_control -z "$SPID" >/dev/null
else
  SC=probe_libswift_Concurrency
  EV=probe_libc:malloc,probe_libc:calloc,probe_libc:realloc,probe_libc:posix_memalign
  [ "$KIND" = gateway ] && EV=$EV,$SC:swift_task_alloc,$SC:swift_task_switch,$SC:swift_continuation_init
  perf stat -x, -e "$EV" -p "$SPID" -o "$TMP/stat" & PPID2=$!
  strace -c -f -p "$SPID" -o "$TMP/strace" 2>/dev/null & TPID=$!
  sleep 1.5
fi
echo go >&"${FAN[1]}"
read -r line <&"${FAN[0]}"
if [ "$MODE" = instr ]; then
  callgrind_control -d "$SPID" >/dev/null; sleep 1
  IR=$(awk '/^summary:|^totals:/ {print $2; exit}' "$(ls -t "$TMP"/cg.out* | head -1)")
  echo "$KIND $(basename "$BIN") S=$S N=$N ($line): $(awk -v a="$IR" -v d=$((S * N)) 'BEGIN {printf "%.0f", a / d}') Ir/delivery"
  cp "$(ls -t "$TMP"/cg.out* | head -1)" "/tmp/fan-$KIND-$(basename "$BIN").cg"
else
  kill -INT $PPID2 $TPID; wait $PPID2 $TPID 2>/dev/null || true
  D=$((S * N))
  val() { awk -F, -v e="$1" '$3 ~ e {s += $1} END {print s + 0}' "$TMP/stat"; }
  per() { awk -v a="$1" -v n="$D" 'BEGIN {printf "%.3f", a / n}'; }
  ALLOC=$(( $(val malloc) + $(val calloc) + $(val realloc) + $(val posix_memalign) ))
  SYS=$(awk '$NF == "total" {print $4}' "$TMP/strace")
  WV=$(awk '$NF == "writev" {print $4}' "$TMP/strace")
  echo "$KIND $(basename "$BIN") S=$S N=$N ($line): per delivery: allocs $(per $ALLOC), syscalls $(per "$SYS"), writev $(per "${WV:-0}")" \
       "$([ "$KIND" = gateway ] && echo ", task_alloc $(per "$(val swift_task_alloc)"), task_switch $(per "$(val swift_task_switch)"), continuations $(per "$(val swift_continuation_init)")")"
  echo "  syscalls: $(awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && $NF != "total" {printf "%s %s, ", $NF, $4}' "$TMP/strace")"
fi
echo bye >&"${FAN[1]}" 2>/dev/null || true
