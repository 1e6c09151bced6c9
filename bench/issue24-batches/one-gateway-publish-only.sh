#!/bin/bash
# One gateway on its own redis-server, both on CPU 0, publish only (sse-load on CPU 1, 16
# publishers, 100 topics, 6 s); prints publishes/s, the publish round trip p99, and the CPU
# time per publish of redis-server and of the gateway (from /proc, over the load's run).
# usage: bench/issue24-batches/one-gateway-publish-only.sh GATEWAY_BINARY LABEL
# (release builds; run from the repository's root after `swift build -c release`)
BIN=$1; LABEL=$2; PORT=6393
LOAD=$(cd "$(dirname "$0")/../.." && pwd)/.build/release/sse-load
redis-cli -p $PORT shutdown nosave >/dev/null 2>&1; sleep 0.2
taskset -c 0 redis-server --port $PORT --save '' --appendonly no --daemonize yes >/dev/null; sleep 0.3
taskset -c 0 $BIN --host 127.0.0.1 --port 18081 --redis redis://127.0.0.1:$PORT > /tmp/gw-$LABEL.log 2>&1 &
GW=$!; sleep 1.5
RPID=$(redis-cli -p $PORT INFO server | grep process_id | cut -d: -f2 | tr -d '\r')
r0=$(awk '{print $14+$15}' /proc/$RPID/stat); g0=$(awk '{print $14+$15}' /proc/$GW/stat)
OUT=$(taskset -c 1 $LOAD --url http://127.0.0.1:18081 --subscribers 0 --topics 100 --publishers 16 --rate 0 --size 128 --duration 6s --json 2>/dev/null)
r1=$(awk '{print $14+$15}' /proc/$RPID/stat); g1=$(awk '{print $14+$15}' /proc/$GW/stat)
echo "$OUT" | python3 -c "
import json,sys; d=json.load(sys.stdin); n=d['publish_rate_achieved']*6
print('$LABEL', round(d['publish_rate_achieved']), 'pub/s  p99', d['publish_ack_p99_ms'], 'ms  redis us/pub', round(($r1-$r0)*10000/n,1), ' gw us/pub', round(($g1-$g0)*10000/n,1))"
kill $GW; wait $GW 2>/dev/null; redis-cli -p $PORT shutdown nosave >/dev/null 2>&1
