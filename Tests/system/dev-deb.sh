#!/usr/bin/env bash
# A throw-away .deb of the current build for scripts/test-systemd while developing, when
# `make deb` is not wanted: `make install` of .build/release/aseqosc into a staging folder,
# packed with dpkg-deb (no maintainer scripts, no man pages, not for distribution).
#
#   Tests/system/dev-deb.sh [OUTDIR]     # prints the .deb's path as its last line
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.build/dev-deb}
bin=.build/release/aseqosc
[ -x "$bin" ] || { echo "dev-deb: $bin is missing: swift build -c release" >&2; exit 1; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/aseqosc-dev-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
make -s install DESTDIR="$stage" PREFIX=/usr UNITDIR=/lib/systemd/system >&2
version=$(cat VERSION 2>/dev/null || echo 0.0.0)
arch=$(dpkg --print-architecture)
mkdir -p "$stage/DEBIAN" "$out"
echo /etc/aseqosc/aseqosc.json5 > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: aseqosc
Version: $version-0dev
Architecture: $arch
Maintainer: aseqosc developers <aseqosc@localhost>
Depends: libasound2, liblo7
Section: sound
Priority: optional
Description: ALSA sequencer <-> OSC bridge (development build)
 A throw-away package of the current build, made by Tests/system/dev-deb.sh.
CONTROL
deb=$out/aseqosc_$version-0dev_$arch.deb
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >&2
realpath "$deb"
