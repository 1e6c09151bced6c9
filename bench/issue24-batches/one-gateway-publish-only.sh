#!/bin/bash
# One gateway on its own redis-server, both on CPU 0, publish only (sse-load on CPU 1, 16
# publishers, 100 topics, 6 s): two-gateways.sh with one gateway, which prints publishes/s,
# the publish round trip p99, the CPU time per publish of redis-server and of the gateway,
# the values per call and the context switches per publish.
# usage: bench/issue24-batches/one-gateway-publish-only.sh GATEWAY_BINARY LABEL
# (release builds; run from the repository's root after `swift build -c release`)
exec bash "$(dirname "$0")/two-gateways.sh" "$1" "$2" d 16 1
