#!/bin/sh
# What DeliveryMetrics.recordWrite costs (bench/histograms.md): builds
# bench/histograms/main.swift with the gateway's metric files, optimized, and runs it.
#   bench/histograms.sh [--quick]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# StreamHub's Channel, as its own module (the package's split: the gateway imports it).
swiftc -O -wmo -parse-as-library -swift-version 6 -module-name StreamHub -emit-module -emit-module-path "$out/StreamHub.swiftmodule" \
    -emit-library -static -o "$out/libStreamHub.a" "$root/Sources/StreamHub/Model/Channel.swift"
swiftc -O -wmo -swift-version 6 -module-name HistogramBenchmark -I "$out" -L "$out" -lStreamHub \
    "$root/bench/histograms/main.swift" \
    "$root/Sources/SSEGateway/Metrics/AtomicHistogram.swift" \
    "$root/Sources/SSEGateway/Metrics/HistogramSnapshot.swift" \
    "$root/Sources/SSEGateway/Metrics/DeliveryMetrics.swift" \
    -o "$out/histogram-benchmark"
"$out/histogram-benchmark" "$@"
