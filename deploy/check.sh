#!/usr/bin/env bash
# Checks deploy/ (CI runs it from scripts/test.sh): the alert rules with promtool
# (Debian's prometheus package) and the dashboard as JSON whose every panel has a
# query. That every metric either names exists on a running gateway's /metrics is
# checked by the Swift test DeployFilesTests.
set -euo pipefail
cd "$(dirname "$0")"
command -v promtool >/dev/null || { echo "deploy/check.sh: promtool missing (apt-get install prometheus)" >&2; exit 2; }
promtool check rules prometheus/sse-gateway-rules.yml
python3 - grafana/sse-gateway-dashboard.json <<'PY'
import json, sys
dashboard = json.load(open(sys.argv[1]))
panels = dashboard["panels"]
assert panels, "no panels"
for panel in panels:
    assert panel.get("targets") and all(t.get("expr") for t in panel["targets"]), f"panel without a query: {panel.get('title')}"
print(f"{sys.argv[1]}: {len(panels)} panels, each with its queries")
PY
