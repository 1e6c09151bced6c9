#!/bin/bash
# Two gateways on one redis-server, all three on CPU 0, sse-load on CPU 1 (as issue 24's
# harness runs them), publish only (scenario d: 100 topics, no subscribers, 6 s) or
# 2,000 topics × 2 subscribers (scenario c, 10 s). Prints publishes/s, the publish round
# trip p99, the CPU time per publish of redis-server and of both gateways, the values per
# call of the publish script (XADDs ÷ EVALSHAs), and the context switches per publish of
# the gateways and of redis-server, each split into voluntary (blocked) and not (preempted).
# usage: bench/issue24-batches/two-gateways.sh GATEWAY_BINARY LABEL [d|c] [PUBLISHERS] [GATEWAYS]
# (GATEWAYS: 2 by default; 1 runs the same with one gateway. SHOW_STATS=1 also prints Redis's
# commandstats of the run on standard error.)
# (release builds; run from the repository's root after `swift build -c release`)
BIN=$1; LABEL=$2; SCENARIO=${3:-d}; PUBLISHERS=${4:-16}; GATEWAYS=${5:-2}; PORT=6394
LOAD=$(cd "$(dirname "$0")/../.." && pwd)/.build/release/sse-load
redis-cli -p $PORT shutdown nosave >/dev/null 2>&1; sleep 0.2
taskset -c 0 redis-server --port $PORT --save '' --appendonly no --daemonize yes --maxclients 10000 >/dev/null; sleep 0.3
PIDS=(); URLS=()
for i in $(seq 1 $GATEWAYS); do
    taskset -c 0 $BIN --host 127.0.0.1 --port 1808$i --redis redis://127.0.0.1:$PORT > /tmp/gw$i-$LABEL.log 2>&1 &
    PIDS+=($!); URLS+=(--url http://127.0.0.1:1808$i)
done
sleep 1.5
RPID=$(redis-cli -p $PORT INFO server | grep process_id | cut -d: -f2 | tr -d '\r')
if [ "$SCENARIO" = c ]; then
    ARGS="--subscribers 4000 --topics 2000 --ramp 1s --settle 2s --connect-timeout 30s"; SECONDS_RUN=10
else
    ARGS="--subscribers 0 --topics 100"; SECONDS_RUN=6
fi
cpu() { for p in "$@"; do awk '{print $14+$15}' /proc/$p/stat; done | awk '{s+=$1} END {print s}'; }
switches() {  # $1: voluntary or nonvoluntary; then pids (every thread)
    local kind=$1; shift
    for p in "$@"; do cat /proc/$p/task/*/status; done | awk "/^${kind}_ctxt_switches/ {s+=\$2} END {print s}"
}
redis-cli -p $PORT config resetstat >/dev/null
r0=$(cpu $RPID); g0=$(cpu ${PIDS[*]})
gv0=$(switches voluntary ${PIDS[*]}); gn0=$(switches nonvoluntary ${PIDS[*]})
rv0=$(switches voluntary $RPID); rn0=$(switches nonvoluntary $RPID)
OUT=$(taskset -c 1 $LOAD ${URLS[*]} --publish-to all $ARGS \
      --publishers $PUBLISHERS --rate 0 --size 128 --duration ${SECONDS_RUN}s --topic-prefix $LABEL$RANDOM --json 2>/dev/null)
r1=$(cpu $RPID); g1=$(cpu ${PIDS[*]})
gv1=$(switches voluntary ${PIDS[*]}); gn1=$(switches nonvoluntary ${PIDS[*]})
rv1=$(switches voluntary $RPID); rn1=$(switches nonvoluntary $RPID)
STATS=$(redis-cli -p $PORT info commandstats | tr -d "\r"); [ -n "$SHOW_STATS" ] && echo "$STATS" >&2
calls() { echo "$STATS" | grep "^cmdstat_$1:" | sed 's/^[^:]*:calls=\([0-9]*\).*/\1/'; }
echo "$OUT" | python3 -c "
import json, sys
d = json.load(sys.stdin); n = d['publish_rate_achieved'] * $SECONDS_RUN
evalsha = int('$(calls evalsha)' or 0); xadd = int('$(calls xadd)' or 0)
print('$LABEL $SCENARIO, $GATEWAYS gateway(s), $PUBLISHERS publishers:', round(d['publish_rate_achieved']), 'publishes/s, round trip p99', d['publish_ack_p99_ms'], 'ms,',
      'redis', round(($r1 - $r0) * 10000 / n, 1), 'us/publish, gateways', round(($g1 - $g0) * 10000 / n, 1), 'us/publish,',
      'values/call', str(round(xadd / evalsha, 2) if evalsha else '-') + ',', 'switches/publish: gateways', round(($gv1 - $gv0) / n, 3), 'blocked',
      round(($gn1 - $gn0) / n, 3), 'preempted; redis', round(($rv1 - $rv0) / n, 3), 'blocked', round(($rn1 - $rn0) / n, 3), 'preempted',
      '(load average', open('/proc/loadavg').read().split()[0] + ')')"
kill ${PIDS[*]}; wait ${PIDS[*]} 2>/dev/null; redis-cli -p $PORT shutdown nosave >/dev/null 2>&1
