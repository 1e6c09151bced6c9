#!/usr/bin/env bash
# The one place that knows which Debian packages the project needs, and installs
# the missing ones. Sourced or run by scripts/run.sh, scripts/test.sh and .ci/run.
#
#   bash scripts/install-deps.sh run        what building and serving needs
#   bash scripts/install-deps.sh test       that, plus what every test needs
#   bash scripts/install-deps.sh package    that, plus what packaging/ and deploy/ checks need
#   bash scripts/install-deps.sh --print test   only print the missing packages (one line)
#
# As root, missing packages are installed with apt-get (one `apt-get update` first).
# Not root and something missing: prints the one `apt-get install` line to run and
# exits 2. Python packages for the browser tests are pinned in
# Tests/browser/requirements.txt and installed by Tests/browser/run.sh into a venv.
set -euo pipefail

# Building the gateway: OpenSSL, hiredis and nghttp2 headers through pkg-config.
RUN_PACKAGES=(libssl-dev pkg-config libhiredis-dev libnghttp2-dev)
# The tests: curl and openssl (clients and throwaway certificates), redis-server and
# redis-sentinel (cluster tests), nghttp2-client (HTTP/2 clients), wrk, chromium and a
# Python venv (browser tests).
TEST_PACKAGES=(curl openssl redis-server redis-sentinel nghttp2-client wrk
               chromium python3 python3-venv python3-pip)
# The package and deploy checks: dpkg-shlibdeps, lintian, systemd-analyze, promtool, man.
PACKAGE_PACKAGES=(dpkg-dev lintian systemd prometheus man-db)

print_only=false
if [ "${1:-}" = "--print" ]; then print_only=true; shift; fi
level=${1:-run}

wanted=("${RUN_PACKAGES[@]}")
case "$level" in
    run) ;;
    test) wanted+=("${TEST_PACKAGES[@]}") ;;
    package) wanted+=("${TEST_PACKAGES[@]}" "${PACKAGE_PACKAGES[@]}") ;;
    *) echo "usage: bash scripts/install-deps.sh [--print] run|test|package" >&2; exit 2 ;;
esac

missing=()
for pkg in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
line="apt-get install -y ${missing[*]}"
if $print_only; then
    echo "$line"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages; as root, run:" >&2
    echo "    $line" >&2
    exit 2
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
