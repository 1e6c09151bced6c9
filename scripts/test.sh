#!/usr/bin/env bash
# The project's test command (the README's, and what CI runs after installing).
#
#   bash scripts/test.sh           installs what the tests need (scripts/install-deps.sh:
#                                  as root with apt-get, else prints the apt-get line and
#                                  exits 2), then runs everything CI runs: unit, socket, end-to-end and
#                                  executable tests (the end-to-end ones twice: in memory
#                                  and on Redis), the reliability suite (churn, stalled
#                                  readers, load), the browser page in headless Chromium,
#                                  the deploy/ checks, the Debian package's checks, then
#                                  fuzzing (30 s a target) and the suite (less the
#                                  reliability suite) under ThreadSanitizer and
#                                  AddressSanitizer (see the README for how long it takes)
#   bash scripts/test.sh --quick   the same without the package, fuzzing and sanitizers
#
# The reliability suite runs on its own: it loads both cores for a minute and a half,
# which would starve the timing-sensitive socket tests if they ran beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

full=true
case "${1:-}" in
    --quick) full=false ;;
    '') ;;
    *) echo "usage: bash scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

echo "== installing what the tests need (scripts/install-deps.sh package)"
bash scripts/install-deps.sh package

# Gateways under test run two event loops (--loops 2: connections on both, topics in
# two shards) unless a pass below says 1; the gateway's own default is one per core.
export SSE_GATEWAY_LOOPS="${SSE_GATEWAY_LOOPS:-2}"

# Swift Testing starts every test of a run at once: some 700 tests, each with its own servers,
# on 2 cores, and every failure CI saw in a week was at that start (a bound a quiet machine
# never comes near). The passes below, up to the reliability suite, run at most 16 tests at a
# time (the first pass: 67 s at full width, 75 s at 16 in one local sitting; 64 s on CI). The
# reliability passes keep the default width; the sanitizer passes run one test at a time
# (scripts/sanitizers.sh: --no-parallel).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=16

echo "== swift test (everything but the reliability suite), gateways with --loops $SSE_GATEWAY_LOOPS"
# Includes HTTP2RouteTests and HTTP2ClientTests (curl, nghttp, h2load, Tests/http2/h2probe.py; ~20 s).
swift test --skip Reliability

echo "== swift test: the gateway's suites again with --loops 1 (one loop, one hub)"
SSE_GATEWAY_LOOPS=1 swift test --filter SSEGatewayTests --skip Reliability

echo "== swift test: the end-to-end suites again, on a cluster engine (a redis-server per gateway)"
# Every behaviour of API.md holds with --redis as without it: the same suites, the
# other engine. (The cluster's own suites, ClusterEngineTests and ClusterGatewayTests,
# ran above with everything else.)
SSE_TEST_BACKEND=redis swift test \
    --filter 'CORSAndHeadTests|ProtocolErrorTests|PublishErrorTests|PublishReplyTests|StateReaderTests|StaticAndOpsTests|StreamingTests|HTTPSTests|TopicsStreamTests'

echo "== swift test: the end-to-end suites again, over HTTP/2 (prior knowledge in cleartext, ALPN h2 over TLS)"
# Every route, refusal and header rule of API.md holds over HTTP/2 as over HTTP/1.1: the
# same suites, their client speaking HTTP/2 (libnghttp2's client session). Tests about
# HTTP/1.1 itself (raw malformed requests, chunked framing, HTTP/1.0, pipelining) skip,
# each saying why and where its HTTP/2 counterpart is.
SSE_TEST_HTTP=2 swift test \
    --filter 'CORSAndHeadTests|ProtocolErrorTests|PublishErrorTests|PublishReplyTests|StateReaderTests|StaticAndOpsTests|StreamingTests|HTTPSTests|TopicsStreamTests'

echo "== swift test: the end-to-end suites again, on Redis Cluster (3 masters per gateway's test)"
# The same suites with --redis redis+cluster://: a RedisCluster.startWithoutReplicas()
# per gateway, leased from a pool of three (RedisClusterPool: each start is 3 redis-servers and
# redis-cli --cluster create, ~2 s; emptied with FLUSHALL between tests), as some 50
# clusters at once would overload a 2-core machine (connects time out).
SSE_TEST_BACKEND=redis-cluster swift test \
    --filter 'CORSAndHeadTests|ProtocolErrorTests|PublishErrorTests|PublishReplyTests|StateReaderTests|StaticAndOpsTests|StreamingTests|HTTPSTests|TopicsStreamTests'

echo "== swift test: the cross-gateway suites again, two gateways on one Redis Cluster (3 masters)"
# ClusterGatewayTests and MinReplicasTests ran above on one redis-server; here the same tests on
# a fresh Redis Cluster each (SharedRedis; MinReplicasTests with a replica per master): Redis
# away and back is every node killed and restarted, Redis back empty is the topic's master
# restarted without its data. About 10 s.
SSE_TEST_BACKEND=redis-cluster swift test --filter 'SSEGatewayTests\.(ClusterGatewayTests|MinReplicasTests)'

echo "== swift test --filter Reliability, --loops $SSE_GATEWAY_LOOPS then --loops 1"
# (Reliability includes SentinelFailover: a master, replicas and three redis-sentinels,
# the master killed under publishing, a planned failover, a silent master, auth, a silent
# Redis; about 85 s,
# run once: the --loops 1 pass skips it.)
# (Reliability includes DrainAcrossCluster: a SIGTERM drain of 2,000 subscribers, about 10 s.)
# (Reliability includes LinkPartition and ReadinessTruth: one gateway's link to Redis cut,
# stalled or with its pub/sub muted through a TCP proxy (Tests/proxy/link_proxy.py, python3),
# about 40 s; and RedisClusterGateways: a 3-master Redis Cluster with replicas, a master
# killed and one stopped under publishing, slots moved, about 60 s, run once: the --loops 1
# pass skips it.)
unset SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
swift test --filter Reliability
SSE_GATEWAY_LOOPS=1 swift test --filter Reliability --skip 'SentinelFailover|RedisClusterGateways|ClusterLateGateway|ClusterShardRestart'

echo "== browser tests"
bash Tests/browser/run.sh

echo "== deploy/: promtool check rules, the dashboard's JSON (DeployFilesTests, above, checks the metric names)"
bash deploy/check.sh

if $full; then
    # The Debian package: a static-stdlib release build (about 3 minutes on 2 cores),
    # lintian, dpkg -i, systemd-analyze verify, the page served from /, dpkg --purge.
    echo "== the Debian package (packaging/test-deb.sh)"
    bash packaging/test-deb.sh
    echo "== fuzzing, 30 s a target"
    bash Fuzz/run-all.sh 30
    echo "== sanitizers"
    # The reliability suite is left out under the sanitizers: it drives the real
    # executable for minutes, which sanitized builds slow several times over.
    bash scripts/sanitizers.sh -- --skip Reliability
fi
