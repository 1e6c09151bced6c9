#!/usr/bin/env bash
# Publish-only requests per second: wrk over HTTP/1.1 keep-alive against h2load over
# HTTP/2 (prior knowledge), the same release gateway, the same 10-byte body, the same
# connections; h2load once with one stream per connection (like for like with wrk) and
# once with 10 concurrent streams per connection.
#
#   bash bench/http2_publish.sh [SECONDS]        (default 10)
#
# Needs wrk and h2load (Debian: wrk, nghttp2-client). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
binary=.build/release/sse-gateway
[ -x "$binary" ] || swift build -c release --product sse-gateway >/dev/null
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
"$binary" --port 0 --loops 1 2>"$work/log" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/log" | head -1)
printf 'ten bytes!' > "$work/body"
cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "ten bytes!"
LUA
url=http://127.0.0.1:$port/events/bench
echo "gateway: $binary --loops 1, port $port, ${seconds}s per run, 10 connections"
wrk -t 2 -c 10 -d "${seconds}s" -s "$work/post.lua" "$url" | grep -E "Requests/sec|Non-2xx" | sed 's/^/wrk   HTTP\/1.1, 10 connections:            /'
h2load -t 2 -c 10 -m 1 -D "$seconds" -d "$work/body" "$url" | grep -E "^finished in|status codes" | sed 's/^/h2load HTTP\/2, 10 connections x 1 stream:  /'
h2load -t 2 -c 10 -m 10 -D "$seconds" -d "$work/body" "$url" | grep -E "^finished in|status codes" | sed 's/^/h2load HTTP\/2, 10 connections x 10 streams: /'
