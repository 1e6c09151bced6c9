#!/usr/bin/env bash
# Checks the Debian package (CI runs it from scripts/test.sh; needs root):
#   1. packaging/build-deb.sh builds it;
#   2. lintian reports no errors (warnings are printed, not fatal);
#   3. dpkg -i installs it; systemd-analyze verify passes for the unit;
#   4. the installed gateway, started with / as its working directory, serves the page;
#      sse-load runs; the man pages are found;
#   5. dpkg --purge removes every file it installed, /etc/default/sse-gateway included.
# A package already installed before the check is purged first (the check owns it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ "$(id -u)" -eq 0 ] || { echo "test-deb: needs root (dpkg -i)" >&2; exit 2; }

fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }

deb=$(bash packaging/build-deb.sh | tail -n 1)
[ -f "$deb" ] || fail "no package built"

echo "== lintian $deb"
lintian --tag-display-limit 0 --fail-on error "$deb" || fail "lintian reported errors (above)"
echo "lintian: no errors"

echo "== dpkg -i"
dpkg -s sse-gateway >/dev/null 2>&1 && dpkg --purge sse-gateway >/dev/null
dpkg -i "$deb"
files=$(dpkg -L sse-gateway | while read -r path; do [ -d "$path" ] || echo "$path"; done)
for expected in /usr/bin/sse-gateway /usr/bin/sse-load /lib/systemd/system/sse-gateway.service \
                /etc/default/sse-gateway /usr/share/man/man1/sse-gateway.1.gz /usr/share/sse-gateway/public/index.html; do
    grep -qx "$expected" <<<"$files" || fail "$expected not installed"
done

echo "== systemd-analyze verify"
systemd-analyze verify /lib/systemd/system/sse-gateway.service || fail "systemd-analyze verify"
echo "systemd-analyze verify: passed"

echo "== the installed gateway, run from /"
log=$(mktemp)
(cd / && exec /usr/bin/sse-gateway --port 0) 2>"$log" &
gateway=$!
port=""
for _ in $(seq 1 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { kill "$gateway" 2>/dev/null; cat "$log"; fail "the installed gateway did not start"; }
page=$(curl -sf "http://127.0.0.1:$port/") || { kill "$gateway"; fail "GET / failed"; }
script=$(curl -sf -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/js/stream.js") || true
kill -TERM "$gateway"
wait "$gateway" || fail "the installed gateway did not exit 0 on SIGTERM"
[ "$page" = "$(cat public/index.html)" ] || fail "GET / is not public/index.html"
[ "$script" = 200 ] || fail "GET /js/stream.js answered $script"
grep -q "serving the built-in page" "$log" || fail "start line: $(cat "$log")"
rm -f "$log"
echo "served the page from / on port $port"
/usr/bin/sse-load --help >/dev/null || fail "sse-load --help"
if command -v man >/dev/null; then
    man -w sse-gateway >/dev/null || fail "man sse-gateway not found"
fi

echo "== dpkg --purge"
dpkg --purge sse-gateway
left=$(while read -r path; do [ -e "$path" ] && echo "$path"; done <<<"$files" || true)
[ -z "$left" ] || fail "left after purge: $left"
echo "test-deb: all checks passed"
