#!/usr/bin/env bash
# A CPU profile of the gateway (release build) while compare.py's load runs against it
# (issue 16's before/after profile). The server runs on CPU 0, sse-load (or wrk) on
# CPU 1, as in bench/compare.sh; `perf record -g` samples the server's pid once every
# subscriber is connected, for the publishing part of the run only; the summary
# (`perf report --no-children`, top symbols, Swift names demangled) goes to OUT.
#
#   bench/profile.sh OUT.txt                          # scenario 3: 10,000 subscribers × 20/s
#   bench/profile.sh OUT.txt --scenario 4             # 2 (one rate: --rate, 400/s), 3, 4 or 5
#   bench/profile.sh OUT.txt --binary /tmp/old/sse-gateway   # the "before" build
#   bench/profile.sh OUT.txt --server limit           # the bare C server, for reference
#   bench/profile.sh OUT.txt --quick                  # tiny load, seconds (a smoke test)
#   bench/profile.sh --help
#
# Installs perf (Debian: linux-perf; Ubuntu: linux-tools-common + linux-tools-$(uname -r))
# when missing. When perf cannot sample in this container (no perf_event_open: seccomp,
# perf_event_paranoid without root, no PMU), it says so in its output and in OUT and falls
# back to what /proc gives: the server's CPU time, context switches, read and write
# syscalls over the same window, and a sampled wait-channel histogram of its threads.
# PROFILE_WITHOUT_PERF=1 forces that fallback. See bench/README.md ("Profiles").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }

OUT="" SCENARIO=3 SERVER=gateway BINARY="" QUICK=0 RATE=400 FREQ=999 KEEP=0 CALLGRAPH=1
while [ $# -gt 0 ]; do
    case "$1" in
        --scenario) SCENARIO=$2; shift 2 ;;
        --server) SERVER=$2; shift 2 ;;
        --binary) BINARY=$2; shift 2 ;;
        --rate) RATE=$2; shift 2 ;;
        --freq) FREQ=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --keep) KEEP=1; shift ;;
        --no-callgraph) CALLGRAPH=0; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "profile.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) [ -z "$OUT" ] || { echo "profile.sh: one OUT file only" >&2; exit 2; }; OUT=$1; shift ;;
    esac
done
[ -n "$OUT" ] || { usage >&2; exit 2; }
case "$SCENARIO" in 2|3|4|5) ;; *) echo "profile.sh: --scenario is 2, 3, 4 or 5" >&2; exit 2 ;; esac
case "$SERVER" in gateway|limit) ;; *) echo "profile.sh: --server is gateway or limit" >&2; exit 2 ;; esac
OUT=$(realpath -m "$OUT")
note() { echo "profile.sh: $*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
    note "installing perf"
    as_root apt-get update -qq || true
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends linux-perf >&2 \
        || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            linux-tools-common "linux-tools-$(uname -r)" >&2 \
        || note "could not install perf"
fi

# Build what is needed (a no-op when up to date).
swift build -c release --product sse-load >&2
LOAD=$ROOT/.build/release/sse-load
if [ "$SERVER" = limit ]; then
    mkdir -p .build/limit
    gcc -O2 -g -o .build/limit/limit bench/limit/limit.c
    SERVER_BIN=$ROOT/.build/limit/limit
elif [ -n "$BINARY" ]; then
    SERVER_BIN=$(realpath "$BINARY")
else
    swift build -c release --product sse-gateway >&2
    SERVER_BIN=$ROOT/.build/release/sse-gateway
fi
[ -x "$SERVER_BIN" ] || { note "$SERVER_BIN is not executable"; exit 1; }

TMP=$(mktemp -d /tmp/streams-profile-XXXXXX)
SERVER_PID="" LOAD_PID="" PERF_PID=""
cleanup() {
    for pid in $PERF_PID $LOAD_PID $SERVER_PID; do
        if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
    done
    sleep 0.3
    [ -z "$SERVER_PID" ] || ! kill -0 "$SERVER_PID" 2>/dev/null || kill -9 "$SERVER_PID" 2>/dev/null || true
    if [ "$KEEP" = 1 ]; then note "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

# Does perf sample here? (perf_event_open may be refused in a container.)
PERF_OK=1 PERF_WHY=""
if ! command -v perf >/dev/null 2>&1; then
    PERF_OK=0 PERF_WHY="perf is not installed and could not be installed"
elif ! why=$(timeout 30 perf record -g -o "$TMP/probe.data" -- sleep 0.1 2>&1); then
    PERF_OK=0 PERF_WHY="perf record fails here: $(echo "$why" | grep -v '^\s*$' | head -3 | tr '\n' ' ')"
fi
if [ -n "${PROFILE_WITHOUT_PERF:-}" ]; then  # to try the fallback where perf works
    PERF_OK=0 PERF_WHY="PROFILE_WITHOUT_PERF is set"
fi
if [ "$PERF_OK" = 0 ]; then
    note "PERF CANNOT WORK IN THIS CONTAINER: $PERF_WHY"
    note "falling back to /proc figures (CPU time, context switches, syscalls, wait channels) — no symbols"
fi

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$SERVER" = limit ]; then
    SERVER_CMD=(taskset -c 0 "$SERVER_BIN" "$PORT")
else
    SERVER_CMD=(taskset -c 0 "$SERVER_BIN" --host 127.0.0.1 --port "$PORT" --public "$ROOT/public")
fi
"${SERVER_CMD[@]}" >"$TMP/server.out" 2>&1 &
SERVER_PID=$!
for _ in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { note "the server exited: $(tail -5 "$TMP/server.out")"; exit 1; }
    sleep 0.1
done

# The scenario's load: compare.py's arguments (bench/comparison/scenarios.py), quick: a tiny one.
DURATION=10 SUBSCRIBERS=0
common=(--size 128 --settle 2s --json)
case "$SCENARIO" in
    3) SUBSCRIBERS=10000; [ "$QUICK" = 1 ] && SUBSCRIBERS=200
       LOAD_ARGS=(--subscribers $SUBSCRIBERS --topics 1 --publishers 4 --rate 20 --ramp 2s --connect-timeout 30s
                  --topic-prefix latency/profile) ;;
    2) SUBSCRIBERS=1000; [ "$QUICK" = 1 ] && SUBSCRIBERS=50
       LOAD_ARGS=(--subscribers $SUBSCRIBERS --topics 1 --publishers 4 --rate "$RATE" --ramp 1s
                  --topic-prefix fanout/profile) ;;
    4) SUBSCRIBERS=4000; [ "$QUICK" = 1 ] && SUBSCRIBERS=100
       LOAD_ARGS=(--subscribers $SUBSCRIBERS --topics $((SUBSCRIBERS / 2)) --publishers 16 --rate 0 --ramp 1s
                  --topic-prefix many/profile) ;;
    5) LOAD_ARGS=(--subscribers 0 --topics 100 --publishers 16 --rate 0 --topic-prefix publish-only/profile) ;;
esac
[ "$QUICK" = 1 ] && DURATION=3
WINDOW=$((DURATION - 1))

if [ "$SCENARIO" = 5 ] && command -v wrk >/dev/null 2>&1; then
    cat >"$TMP/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = string.rep("x", 128)
wrk.headers["Content-Type"] = "text/plain"
wrk.headers["Accept"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "/events/publish-only/" .. (n % 100))
end
EOF
    LOAD_CMD=(taskset -c 1 wrk -t1 -c32 "-d${DURATION}s" -s "$TMP/post.lua" "http://127.0.0.1:$PORT")
else
    LOAD_CMD=(taskset -c 1 "$LOAD" --url "http://127.0.0.1:$PORT" "${LOAD_ARGS[@]}" --duration "${DURATION}s"
              "${common[@]}")
fi
"${LOAD_CMD[@]}" >"$TMP/load.out" 2>"$TMP/load.err" &
LOAD_PID=$!

# Wait until every subscriber holds a descriptor on the server (at most 60 s), then a moment more.
fds_now() { ls "/proc/$SERVER_PID/fd" 2>/dev/null | wc -l; }
base_fds=$(fds_now)
for _ in $(seq 600); do
    [ "$(fds_now)" -ge $((base_fds + SUBSCRIBERS)) ] && break
    kill -0 "$LOAD_PID" 2>/dev/null || break
    sleep 0.1
done
sleep 0.5

proc_figures() {  # utime+stime ticks, voluntary, involuntary switches (all threads), syscr, syscw
    local ticks vol=0 invol=0
    ticks=$(awk '{ split($0, a, ") "); split(a[2], f, " "); print f[12] + f[13] }' "/proc/$SERVER_PID/stat")
    for t in /proc/$SERVER_PID/task/*; do
        vol=$((vol + $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status")))
        invol=$((invol + $(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$t/status")))
    done
    echo "$ticks $vol $invol $(awk '/^syscr/ { r = $2 } /^syscw/ { w = $2 } END { print r, w }' "/proc/$SERVER_PID/io")"
}
before=$(proc_figures)
start_ns=$(date +%s%N)
if [ "$PERF_OK" = 1 ]; then
    graph=(); [ "$CALLGRAPH" = 1 ] && graph=(-g)
    note "perf record ${graph[*]} -F $FREQ -p $SERVER_PID for ${WINDOW} s"
    perf record "${graph[@]}" -F "$FREQ" -p "$SERVER_PID" -o "$TMP/perf.data" -- sleep "$WINDOW" \
        >"$TMP/perf.out" 2>&1 || note "perf record: $(tail -3 "$TMP/perf.out")"
else
    # Fallback: sample every thread's wait channel 20 times a second.
    end=$(( $(date +%s) + WINDOW ))
    while [ "$(date +%s)" -lt "$end" ]; do
        for w in /proc/$SERVER_PID/task/*/wchan; do
            { cat "$w" 2>/dev/null || true; echo; } >>"$TMP/wchan"
        done
        sleep 0.05
    done
fi
after=$(proc_figures)
window_s=$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
wait "$LOAD_PID" || note "the load exited $?: $(tail -3 "$TMP/load.err")"
LOAD_PID=""

# The summary.
CLK=$(getconf CLK_TCK)
read -r t0 v0 i0 r0 w0 <<<"$before"
read -r t1 v1 i1 r1 w1 <<<"$after"
demangle() { if command -v swift >/dev/null 2>&1; then swift demangle --simplified 2>/dev/null || cat; else cat; fi; }
# Swift names demangled, perf's empty IPC columns and trailing blanks dropped, long names cut.
tidy() { demangle | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/[[:space:]]+$//' | cut -c1-180; }
{
    echo "# profile: $SERVER, scenario $SCENARIO$([ "$QUICK" = 1 ] && echo ' (quick: tiny load)')"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$ROOT" rev-parse --short HEAD)$(
        [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] && echo ' (with uncommitted changes)')"
    echo "- server: ${SERVER_CMD[*]/$PORT/\$PORT}"
    echo "- load:   ${LOAD_CMD[*]/$PORT/\$PORT}" | sed "s|$TMP|\$TMP|g"
    echo "- 1-min load average at the end: $(cut -d' ' -f1 /proc/loadavg) (other processes on the 2 CPUs skew a profile)"
    echo "- window: ${window_s} s, $([ "$SUBSCRIBERS" -gt 0 ] && echo "once all $SUBSCRIBERS subscribers were connected" \
        || echo "from 0.5 s into the load"); server CPU in it: $(
        awk -v a="$t0" -v b="$t1" -v c="$CLK" -v w="$window_s" 'BEGIN { printf "%.2f s (%.0f %% of a core)", (b - a) / c, 100 * (b - a) / c / w }')"
    echo "- context switches in it: $((v1 - v0)) voluntary, $((i1 - i0)) involuntary; syscalls (/proc/<pid>/io syscr, syscw: read/write/readv/writev, not recv/send): $((r1 - r0)) reads, $((w1 - w0)) writes"
    echo "- the load's result:"
    echo
    if [ "$SCENARIO" = 5 ] && [ "${LOAD_CMD[3]}" = wrk ]; then
        grep -E 'Requests/sec|Latency|requests in|Non-2xx|Socket errors' "$TMP/load.out" | sed 's/^/      /' || true
    else
        python3 - "$TMP/load.out" <<'EOF'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
if not lines:
    print("      (no JSON from sse-load)")
else:
    r = json.loads(lines[-1])
    keys = ("connections_established", "publish_rate_achieved", "deliveries_per_s", "latency_p50_ms",
            "latency_p99_ms", "loss", "slow_subscriber_disconnects", "load_cpu_s", "elapsed_s")
    print("      " + ", ".join(f"{k} {r.get(k)}" for k in keys))
EOF
    fi
    echo
    if [ "$PERF_OK" = 1 ] && [ -s "$TMP/perf.data" ]; then
        echo "## perf report --no-children: top symbols (self time, % of the server's samples)"
        echo
        echo '```'
        perf report -i "$TMP/perf.data" --no-children --stdio --sort dso,symbol -g none --percent-limit 0.4 \
            2>/dev/null | grep -v '^$' | grep -v '^# *$' | grep -v '^# To display' | tidy | head -70 || true
        echo '```'
        echo
        echo "## by shared object"
        echo
        echo '```'
        perf report -i "$TMP/perf.data" --no-children --stdio --sort dso -g none --percent-limit 0.5 \
            2>/dev/null | grep -v '^#' | grep -v '^$' | head -20 || true
        echo '```'
        if [ "$CALLGRAPH" = 1 ]; then
            echo
            echo "## where the symbols above 3 % are called from (perf report --no-children -g caller, 2 % cut-off, 10 frames)"
            echo
            echo '```'
            perf report -i "$TMP/perf.data" --no-children --stdio --sort symbol -g caller,2,callee,function,percent \
                --max-stack 10 --percent-limit 3 2>/dev/null | grep -v '^#' | grep -v '^$' | tidy | head -150 || true
            echo '```'
        fi
    else
        echo "## no perf profile"
        echo
        echo "perf could not sample here: ${PERF_WHY:-perf record wrote no samples}."
        echo "Fallback: each thread's wait channel (/proc/<pid>/task/*/wchan), sampled 20 times a second"
        echo "(\"0\" = running or runnable on a CPU, anything else = the kernel function it sleeps in):"
        echo
        echo '```'
        grep -v '^$' "$TMP/wchan" 2>/dev/null | sort | uniq -c | sort -rn | head -20 || true
        echo '```'
    fi
} >"$OUT"
note "wrote $OUT"
[ "$KEEP" = 1 ] && [ "$PERF_OK" = 1 ] && note "perf data: $TMP/perf.data (perf report -i $TMP/perf.data --no-children)"
exit 0
