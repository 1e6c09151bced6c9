#!/usr/bin/env bash
# The long versions of the reliability tests (issue 8), against the real
# executable: subscriber churn for MINUTES (default 15) in cycles of 3,000
# sessions, the same over TLS for MINUTES again (cycles of 1,500 sessions, a
# quarter of them leaving mid-handshake), then 200 stalled readers beside 5
# readers while 100,000 events are published (on /events and on /state),
# 10,000 subscribers while 8 publishers post flat out for 30 s, and SIGTERM
# under that load.
#
#   bench/soak/run.sh [MINUTES]
#
# SOAK_CONFIGURATION=debug runs the debug build instead of release (release is
# what a deployment runs, and lets one sse-load process keep up with 10,000
# subscribers). The whole output goes to bench/soak/logs/; the figures each test
# prints (descriptors, RSS, subscribers before and after, per churn cycle) are
# shown as they come and summed up at the end. Exit status: swift test's.
set -euo pipefail
cd "$(dirname "$0")/../.."

minutes="${1:-15}"  # twice: plain, then TLS — 30 minutes of churn in all
case "$minutes" in
    ''|*[!0-9]*) echo "usage: bench/soak/run.sh [MINUTES]" >&2; exit 2 ;;
esac
configuration="${SOAK_CONFIGURATION:-release}"
flags=(-c "$configuration")
# The tests use @testable imports, which a release build allows only with this.
[ "$configuration" = release ] && flags+=(-Xswiftc -enable-testing)

swift build --build-tests "${flags[@]}"

mkdir -p bench/soak/logs
log="bench/soak/logs/soak-$(date -u +%Y%m%dT%H%M%SZ).log"
{
    echo "soak: churn for $minutes min, $configuration build, commit $(git rev-parse --short HEAD)"
    echo "machine: $(nproc) cores, $(free -m | awk '/^Mem:/ {print $2}') MiB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "started: $(date -u +%FT%TZ)"
} | tee "$log"

set +e
STREAMS_SOAK_SECONDS=$((minutes * 60)) swift test --skip-build "${flags[@]}" \
    --filter 'SSEGatewayTests.Reliability' >>"$log" 2>&1 &
tests=$!
# Show the figures and results as they arrive (the log has everything).
tail -n +1 -f "$log" --pid "$tests" | grep --line-buffered -E '^reliability:|^(✔|✘) Test |Expectation failed|recorded an issue'
wait "$tests"
status=$?
set -e

echo "ended: $(date -u +%FT%TZ), exit status $status" | tee -a "$log"
echo
echo "== figures =="
grep -E '^reliability:' "$log" | sed 's/^reliability: //'
echo
echo "== results =="
grep -E '^(✔|✘) Test ' "$log" | grep -v '^✔ Test run' || true
echo "log: $log"
exit "$status"
