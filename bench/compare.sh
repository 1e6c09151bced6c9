#!/usr/bin/env bash
# The gateway side by side with nginx + Nchan (issue 5): installs what is missing
# (nginx, libnginx-mod-nchan, wrk; Debian/Ubuntu apt-get), builds the release
# sse-gateway and sse-load, then runs bench/compare.py with the same arguments.
#
#   bench/compare.sh                  # full run (~25 min), writes bench/RESULTS.md
#   bench/compare.sh --quick          # seconds per scenario; exits 1 on gateway errors or loss
#   bench/compare.sh --wait-quiet 40  # first wait up to 40 min for a quiet machine
#   bench/compare.sh --help           # every option
# See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
[ -e /usr/lib/nginx/modules/ngx_nchan_module.so ] || missing+=(libnginx-mod-nchan)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "compare.sh: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    apt_install "${missing[@]}"
fi
# wrk is the second publish-only client (scenario 5); the run goes on without it.
if ! command -v wrk >/dev/null 2>&1; then
    apt_install wrk >&2 || echo "compare.sh: wrk not available; scenario 5 uses sse-load only" >&2
fi

swift build -c release --product sse-gateway >&2
swift build -c release --product sse-load >&2
exec python3 bench/compare.py "$@"
