#!/usr/bin/env bash
# Builds one libFuzzer target and runs it for SECONDS on its committed seed corpus.
#
#   Fuzz/run.sh TARGET SECONDS      TARGET: request | chunked | sse | topic | jwt | http2
#
# SwiftPM does not link fuzzers, so the package's own targets are built by SwiftPM with
# libFuzzer's coverage and ASan (`-sanitize=fuzzer,address`, `-enable-testing` so the
# entry file can `@testable import` them), in their own build path under .build/fuzz/;
# then the entry file is linked against their objects with `swiftc`. The toolchain ships
# libFuzzer's runtime; no package is needed. New corpus entries go to a temporary folder,
# never into Fuzz/corpus/, so a run leaves the tree clean; the committed corpus and
# Fuzz/regressions/TARGET/ are read-only inputs. A crash, a hang (-timeout) or a failed
# oracle exits non-zero, and the input is kept under .build/fuzz/artifacts/TARGET/: add it
# to Fuzz/regressions/TARGET/ and as a test under Tests/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: Fuzz/run.sh TARGET SECONDS}
seconds=${2:?usage: Fuzz/run.sh TARGET SECONDS}

# The entry file, and the package targets it links: the one it exercises last, after
# the targets that one depends on (Package.swift).
case "$target" in
    request) entry=Fuzz/RequestParserFuzz.swift; modules=(Locking HTTPCore) ;;
    chunked) entry=Fuzz/ChunkedBodyFuzz.swift; modules=(Locking HTTPCore) ;;
    sse)     entry=Fuzz/SSEEncoderFuzz.swift; modules=(Locking StreamHub) ;;
    topic)   entry=Fuzz/TopicFuzz.swift; modules=(Locking HTTPCore StreamHub JWT GatewayAPI) ;;
    jwt)     entry=Fuzz/JWTParserFuzz.swift; modules=(Locking JWT) ;;
    http2)   entry=Fuzz/HTTP2SessionFuzz.swift; modules=(Locking HTTPCore) ;;
    *) echo "unknown fuzz target '$target' (request, chunked, sse, topic, jwt, http2)" >&2; exit 2 ;;
esac

out=.build/fuzz
# libFuzzer reports crashes itself; the Swift backtracer would only slow each one down.
export SWIFT_BACKTRACE=enable=no
binary=$out/$target
artifacts=$out/artifacts/$target
mkdir -p "$out" "$artifacts"

package=$out/package
stale=0
[ -x "$binary" ] || stale=1
for source in "$entry" Fuzz/Support/*.swift Package.swift "$0" $(find Sources -name '*.swift' -o -name '*.h'); do
    [ "$source" -nt "$binary" ] && stale=1
done
if [ $stale -eq 1 ]; then
    echo "fuzz $target: building"
    build_start=$SECONDS
    swift build -c release --build-path "$package" --target "${modules[-1]}" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -g >/dev/null
    products=$package/release
    objects=()
    for module in "${modules[@]}"; do objects+=("$products/$module.build"/*.o); done
    # lld (shipped with the toolchain): gold warns about every ASan check symbol.
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -use-ld=lld -module-name "Fuzz_$target" \
        -I "$products/Modules" -I "$products" -Xcc -fmodule-map-file=Sources/CStreamsSSL/module.modulemap \
        -Xcc -fmodule-map-file=Sources/CNghttp2/module.modulemap \
        -Xcc -fmodule-map-file=Sources/CThreadSanitizer/module.modulemap \
        "$entry" Fuzz/Support/*.swift "${objects[@]}" -lssl -lcrypto -lnghttp2 -o "$binary.tmp"
    mv "$binary.tmp" "$binary"
    echo "fuzz $target: built in $((SECONDS - build_start)) s"
fi

# FUZZ_CORPUS=DIR keeps the grown corpus in DIR (to resume, or to pick new seeds from).
log=$(mktemp "${TMPDIR:-/tmp}/fuzz-$target.log.XXXXXX")
if [ -n "${FUZZ_CORPUS:-}" ]; then
    work=$FUZZ_CORPUS
    mkdir -p "$work"
    trap 'rm -f "$log"' EXIT
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
    trap 'rm -rf "$work" "$log"' EXIT
fi
inputs=("$work" "Fuzz/corpus/$target")
[ -d "Fuzz/regressions/$target" ] && inputs+=("Fuzz/regressions/$target")
dict=()
[ -f "Fuzz/dict/$target.dict" ] && dict=(-dict="Fuzz/dict/$target.dict")

echo "fuzz $target: running for $seconds s"
set +e
"$binary" "${inputs[@]}" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
status=$?
set -e

# The last status line (runs, coverage, corpus) and the average speed.
grep -E '^#[0-9]+' "$log" | tail -n 1 || true
grep -E '^stat::(average_exec_per_sec|number_of_executed_units|new_units_added)' "$log" || true
if [ $status -ne 0 ]; then
    echo "fuzz $target: FAILED (exit $status); the end of its log:"
    tail -n 60 "$log"
    echo "fuzz $target: reproduce with: $binary $artifacts/<file>"
    ls -l "$artifacts"
fi
exit $status
