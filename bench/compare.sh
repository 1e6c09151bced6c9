#!/usr/bin/env bash
# The gateway side by side with nginx + Nchan (issue 5) and the bare C server
# (issue 16: bench/limit/limit.c, a copy of ../shared/bench/limit.c): installs what is
# missing (nginx, libnginx-mod-nchan, gcc, wrk; Debian/Ubuntu apt-get), builds the
# release sse-gateway and sse-load and, with gcc, the bare C server into .build/limit/
# (or uses $STREAMS_LIMIT), then runs bench/compare.py with the same arguments.
#
#   bench/compare.sh                      # full run (~40 min with three servers), writes bench/RESULTS.md
#   bench/compare.sh --scenarios issue16  # issue 16's table only (scenarios 1, 2, 3, 4, 5), two runs each
#   bench/compare.sh --scenarios issue17  # issue 17: Nchan (2 workers), gateway --loops 1 / --loops 2, unpinned
#   bench/compare.sh --quick              # seconds per scenario; exits 1 on gateway errors or loss
#   bench/compare.sh --wait-quiet 40      # first wait up to 40 min for a quiet machine
#   bench/compare.sh --help               # every option
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
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
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
# The bare C server: built fresh each time (a second), outside the source tree.
if [ -z "${STREAMS_LIMIT:-}" ]; then
    mkdir -p .build/limit
    gcc -O2 -o .build/limit/limit bench/limit/limit.c >&2
    export STREAMS_LIMIT="$PWD/.build/limit/limit"
fi
exec python3 bench/compare.py "$@"
