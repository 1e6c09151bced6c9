#!/usr/bin/env bash
# The project's first command (the README's): install what building needs (as root;
# otherwise print the one `apt-get install` line and exit 2), build the release
# gateway, and serve with the defaults: http://127.0.0.1:8080, the browser page at /.
#
#   bash scripts/run.sh                  serve on 127.0.0.1:8080
#   bash scripts/run.sh --port 9000 ...  extra arguments go to sse-gateway (see --help)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh run
echo "== swift build -c release"
swift build -c release --product sse-gateway
exec .build/release/sse-gateway "$@"
