#!/usr/bin/env bash
# The browser page (public/) in Debian's headless chromium against the real
# sse-gateway executable. Usage: bash Tests/browser/run.sh [pytest args...]
#
# - chromium absent and CI unset: prints "skipped: chromium not installed", exits 0;
#   with CI set (CI=true), installs Debian's chromium with apt-get and runs.
# - Python packages go into .build/browser-venv (pinned in requirements.txt); no
#   browser is downloaded. The gateway is built with `swift build` unless
#   SSE_GATEWAY_BIN names one.
# - Screenshots and gateway logs: .build/browser-artifacts/ (page.png, page-phone.png,
#   failed-*.png on failure). STREAMS_UPDATE_DOCS_SCREENSHOT=1 refreshes docs/page.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
here=$root/Tests/browser

ci=false
case "${CI:-}" in ""|false|0|no) ;; *) ci=true ;; esac

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    if [ "$ci" != true ]; then
        echo "browser tests: skipped: chromium not installed (apt-get install chromium; CI=true installs it)"
        exit 0
    fi
    echo "browser tests: installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
    chromium=/usr/bin/chromium
fi
echo "browser tests: $("$chromium" --version 2>/dev/null || echo "$chromium")"

# Python: a venv under .build, reinstalled when requirements.txt or the Python change.
python=${PYTHON:-python3}
venv=$root/.build/browser-venv
stamp="$(sha256sum "$here/requirements.txt" | cut -c1-16) $("$python" -c 'import sys; print(sys.version.split()[0])')"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv"
    mkdir -p "$root/.build"
    if ! "$python" -m venv "$venv" 2>/dev/null; then
        [ "$ci" = true ] || { echo "browser tests: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
        rm -rf "$venv"
        apt-get install -y -qq python3-venv >/dev/null
        python=/usr/bin/python3
        "$python" -m venv "$venv"
    fi
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$venv/bin/pip" install -q --disable-pip-version-check \
        -r "$here/requirements.txt"
    echo "$stamp" > "$venv/.stamp"
fi

if [ -z "${SSE_GATEWAY_BIN:-}" ]; then
    echo "browser tests: swift build --product sse-gateway"
    swift build --product sse-gateway 2>&1 | tail -n 3
    export SSE_GATEWAY_BIN=$root/.build/debug/sse-gateway
fi

mkdir -p "$root/.build/browser-artifacts"
cd "$here"
export CHROMIUM=$chromium PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# A hung browser or gateway must not hold CI: the suite takes well under a minute.
status=0
timeout -k 10 240 "$venv/bin/python" -m pytest -v "$@" || status=$?
echo "browser tests: artefacts in .build/browser-artifacts/ (page.png: the page with live data)"
exit "$status"
