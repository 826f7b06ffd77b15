#!/usr/bin/env bash
# A throw-away .deb of the current build for scripts/test-systemd while developing, when
# `make deb` is not wanted: `make install` of the built binary (BIN, default the static
# .build/static/release/aseqosc, else .build/release/aseqosc; nothing is rebuilt) into a staging
# folder, packed with dpkg-deb (no maintainer scripts, not for distribution).
#
#   [BIN=...] Tests/system/dev-deb.sh [OUTDIR]     # prints the .deb's path as its last line
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.build/dev-deb}
bin=${BIN:-.build/static/release/aseqosc}
[ -n "${BIN:-}" ] || [ -x "$bin" ] || bin=.build/release/aseqosc
[ -x "$bin" ] || { echo "dev-deb: $bin is missing: make build" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aseqosc-dev-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/root
cp "$bin" "$tmp/aseqosc"   # a BIN the Makefile does not build: installed as it is
echo "dev-deb: packing $bin" >&2
make -s install BIN="$tmp/aseqosc" DESTDIR="$stage" PREFIX=/usr UNITDIR=/lib/systemd/system >&2
version=$(cat VERSION 2>/dev/null || echo 0.0.0)
arch=$(dpkg --print-architecture)
# libavahi-client3 and libwebsockets are opened on first use, as in debian/control; the
# libwebsockets is the one this machine's header calls for, which the binary was built against.
lws=$(scripts/libwebsockets-package)
mkdir -p "$stage/DEBIAN" "$out"
echo /etc/aseqosc/aseqosc.json5 > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: aseqosc
Version: $version-0dev
Architecture: $arch
Maintainer: aseqosc developers <aseqosc@localhost>
Depends: libasound2, liblo7, libavahi-client3, $lws
Section: sound
Priority: optional
Description: ALSA sequencer <-> OSC bridge (development build)
 A throw-away package of the current build, made by Tests/system/dev-deb.sh.
CONTROL
deb=$out/aseqosc_$version-0dev_$arch.deb
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >&2
realpath "$deb"
