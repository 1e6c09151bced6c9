#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (Fuzz/run.sh) and ends with a
# "fuzz: N passed, N failed" line; exits non-zero if any target failed.
#
#   Fuzz/run-all.sh SECONDS
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: Fuzz/run-all.sh SECONDS}

passed=0
failed=()
for target in request chunked sse topic jwt http2; do
    if Fuzz/run.sh "$target" "$seconds"; then
        passed=$((passed + 1))
    else
        failed+=("$target")
    fi
done
[ ${#failed[@]} -eq 0 ] || echo "fuzz: failed targets: ${failed[*]}"
echo "fuzz: $passed passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
