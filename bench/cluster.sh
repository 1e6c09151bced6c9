#!/usr/bin/env bash
# The gateway cluster (--redis) side by side with an Nchan cluster on the same Redis
# (issues 12 and 24): installs what is missing (nginx-light, libnginx-mod-nchan, redis-server;
# Debian/Ubuntu apt-get), builds the release sse-gateway and sse-load, then runs
# bench/cluster.py with the same arguments.
#
#   bench/cluster.sh --issue24 --wait-quiet 30   # issue 24: in memory, on Redis, 2 gateways, 2 Nchan;
#                                     # scenarios a-d, one run (~6-8 min); bench/RESULTS-issue24.md, prints the targets
#   bench/cluster.sh                  # issue 12: two runs of scenarios a, b (~12 min), writes bench/cluster.md
#   bench/cluster.sh --quick          # seconds per scenario (smoke test); exit 1 on gateway errors or loss
#   bench/cluster.sh --wait-quiet 20  # first wait up to 20 min for a 1-min load average below 1.5
#   bench/cluster.sh --help           # every option
# See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
[ -e /usr/lib/nginx/modules/ngx_nchan_module.so ] || missing+=(libnginx-mod-nchan)
[ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "cluster.sh: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

swift build -c release --product sse-gateway >&2
swift build -c release --product sse-load >&2
exec python3 bench/cluster.py "$@"
