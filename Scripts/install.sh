#!/usr/bin/env bash
# Installs StackSampler at a stable path: the preload library and its Swift part in
# PREFIX/lib/stacksampler, the CLI in PREFIX/bin, the systemd drop-in in
# PREFIX/share/stacksampler. PREFIX is /usr/local unless given; DESTDIR is honoured.
#   Scripts/install.sh [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}
case $prefix in /*) ;; *) echo "install: PREFIX must be an absolute path, not '$prefix'" >&2; exit 2;; esac
products=.build/release
for built in libStackSamplerPreload.so libStackSamplerPreloadSwift.so stacksampler; do
  [ -f "$products/$built" ] || { echo "install: $products/$built is missing; run swift build -c release first" >&2; exit 1; }
done
root=${DESTDIR:-}$prefix
install -d "$root/lib/stacksampler" "$root/bin" "$root/share/stacksampler"
# The Swift part is found beside the preload library, so both go in one folder.
install -m 0755 "$products/libStackSamplerPreload.so" "$products/libStackSamplerPreloadSwift.so" "$root/lib/stacksampler/"
install -m 0755 "$products/stacksampler" "$root/bin/"
sed "s|@PREFIX@|$prefix|g" Scripts/deploy/stacksampler.conf > "$root/share/stacksampler/stacksampler.conf"
chmod 0644 "$root/share/stacksampler/stacksampler.conf"
echo "install: $prefix/lib/stacksampler/libStackSamplerPreload.so, $prefix/bin/stacksampler, $prefix/share/stacksampler/stacksampler.conf"
