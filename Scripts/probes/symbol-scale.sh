#!/usr/bin/env bash
# The symbolizer's cost on large and small binaries: the first lookup in a module (its symbol
# and function tables loaded: time and MB) and then LOOKUPS lookups of pseudo-random addresses
# in its executable segment, with demangling (Scripts/probes/symbol_scale_probe.swift), ROUNDS
# times per binary, each with a new symbolizer (the file's pages stay cached after the first).
#
#   Scripts/probes/symbol-scale.sh [LOOKUPS [ROUNDS [BINARY...]]]
#
# LOOKUPS defaults to 200000 and ROUNDS to 3; the binaries to the toolchain's swift-frontend
# (beside the swift on the PATH; about 200 MB, linked by lld) and libc.so.6 (the largest table
# of a small C program). The probe is compiled, as the release build compiles the StackSampler
# module (-O, whole module), from that module's sources, which gives it the symbolizer's
# internal types; it links the release build's C objects (built if missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
lookups="${1:-200000}"
rounds="${2:-3}"
shift "$(( $# < 2 ? $# : 2 ))"
if [ "$#" -eq 0 ]; then
  frontend="$(dirname "$(readlink -f "$(command -v swift)")")/swift-frontend"
  set -- "$frontend" "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)"
fi
source Scripts/lib/build-dir.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mapfile -t sources < <(find Sources/StackSampler -name '*.swift' | sort)
swiftc -O -wmo -swift-version 6 -parse-as-library -module-name SymbolScaleProbe -package-name probe \
  -Xfrontend -disable-implicit-concurrency-module-import -Xfrontend -disable-implicit-string-processing-module-import \
  -Xcc -fmodule-map-file="$build/FileFormatLibraries.build/module.modulemap" -Xcc -I -Xcc Sources/FileFormatLibraries/include \
  -Xcc -fmodule-map-file="$build/PrivateLibrary.build/module.modulemap" -Xcc -I -Xcc Sources/PrivateLibrary/include \
  -Xcc -fmodule-map-file=Sources/CEngineHeader/module.modulemap \
  -o "$work/symbol_scale_probe" Scripts/probes/symbol_scale_probe.swift "${sources[@]}" \
  "$build"/CEngine.build/*.o "$build"/FileFormatLibraries.build/*.o "$build"/PrivateLibrary.build/*.o -ldl -lpthread -lrt
"$work/symbol_scale_probe" "$lookups" "$rounds" "$@"
