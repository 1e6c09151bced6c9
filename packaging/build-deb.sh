#!/usr/bin/env bash
# Builds the Debian package of the gateway with dpkg-deb, from this checkout:
#
#   bash packaging/build-deb.sh            writes .build/deb/sse-gateway_<version>_<arch>.deb
#                                          and prints its path on the last line
#
# What it holds:
#   /usr/bin/sse-gateway, /usr/bin/sse-load   release builds, the Swift runtime linked in
#                                             (--static-swift-stdlib: no toolchain needed)
#   /usr/share/sse-gateway/public/            the page (also built into the executable)
#   /lib/systemd/system/sse-gateway.service   the unit (packaging/sse-gateway.service)
#   /etc/default/sse-gateway                  settings as SSE_GATEWAY_* variables (a conffile)
#   /usr/share/man/man1/sse-gateway.1.gz, sse-load.1.gz   generated from --help
#   /usr/share/doc/sse-gateway/               copyright, changelog
# Depends: computed by dpkg-shlibdeps from the executables (OpenSSL, hiredis, libc…).
#
# The unit is installed, not enabled: `systemctl enable --now sse-gateway`.
# Needs dpkg-dev (dpkg-shlibdeps), man-db is not needed; scripts/install-deps.sh package installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=$(sed -n 's/.*static let version = "sse-gateway \([^"]*\)".*/\1/p' Sources/SSEGateway/Config/GatewayConfiguration.swift)
[ -n "$version" ] || { echo "build-deb: cannot read the version" >&2; exit 1; }
arch=$(dpkg --print-architecture)
scratch=.build/package
out=.build/deb
stage=$out/stage

echo "== swift build -c release --static-swift-stdlib (sse-gateway, sse-load) in $scratch"
for product in sse-gateway sse-load; do
    swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product "$product" 2>&1 | tail -n 2
done
bin=$(swift build -c release --static-swift-stdlib --scratch-path "$scratch" --show-bin-path)

rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/sse-gateway" "$stage/lib/systemd/system" \
    "$stage/etc/default" "$stage/usr/share/man/man1" "$stage/usr/share/doc/sse-gateway"

for program in sse-gateway sse-load; do
    install -m 0755 "$bin/$program" "$stage/usr/bin/$program"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/$program"
done
cp -r public "$stage/usr/share/sse-gateway/public"
find "$stage/usr/share/sse-gateway" -name '.*' -prune -exec rm -rf {} +
install -m 0644 packaging/sse-gateway.service "$stage/lib/systemd/system/sse-gateway.service"
install -m 0644 packaging/default "$stage/etc/default/sse-gateway"

# Man pages from --help.
"$stage/usr/bin/sse-gateway" --help | python3 packaging/help2man.py sse-gateway 1 \
    "server-sent events gateway" "sse-gateway $version" | gzip -9n > "$stage/usr/share/man/man1/sse-gateway.1.gz"
"$stage/usr/bin/sse-load" --help | python3 packaging/help2man.py sse-load 1 \
    "load generator for the sse-gateway" "sse-gateway $version" | gzip -9n > "$stage/usr/share/man/man1/sse-load.1.gz"

# Documentation lintian requires.
cat > "$stage/usr/share/doc/sse-gateway/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: streams
Comment: the server-sent events gateway of the streams project, packaged from its repository.

Files: *
Copyright: 2026 the streams authors
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
COPYRIGHT
date=$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
cat <<CHANGELOG | gzip -9n > "$stage/usr/share/doc/sse-gateway/changelog.gz"
sse-gateway ($version) unstable; urgency=medium

  * Packaged from the streams repository (packaging/build-deb.sh).

 -- streams maintainers <streams@example.org>  $date
CHANGELOG

# Shared-library dependencies, as dpkg-shlibdeps reads them from the executables.
shlibs=$(mktemp -d)
mkdir -p "$shlibs/debian"
printf 'Source: sse-gateway\n\nPackage: sse-gateway\nArchitecture: any\n' > "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "$root/$stage/usr/bin/sse-gateway" "$root/$stage/usr/bin/sse-load" 2>/dev/null \
    | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: sse-gateway
Version: $version
Architecture: $arch
Maintainer: streams maintainers <streams@example.org>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: server-sent events gateway with a browser page
 A publisher POSTs a value to a topic; every subscriber of that topic receives
 it as a server-sent event, live, through curl, a browser EventSource or a load
 tool holding thousands of connections. Each topic has a state channel (the
 current value, then every change) and an events channel (every event, in
 order, resumable with Last-Event-ID). Includes the sse-load load tool, a
 systemd unit and settings in /etc/default/sse-gateway.
CONTROL
echo "/etc/default/sse-gateway" > "$stage/DEBIAN/conffiles"

find "$stage" -type d -exec chmod 0755 {} +
deb=$out/sse-gateway_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "build-deb: $(du -h "$deb" | cut -f1) $deb"
echo "$deb"
