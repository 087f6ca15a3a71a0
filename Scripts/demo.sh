#!/usr/bin/env bash
# Builds StackSampler, profiles the bundled demo program (Scripts/demo/demo.c)
# in cpu and wall mode, and writes the results to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
swift build -c release
source Scripts/lib/build-dir.sh
mkdir -p out
gcc -O2 -pthread Scripts/demo/demo.c -o out/demo
stacksampler="$build/stacksampler"
"$stacksampler" record --mode cpu --period 10ms -o out/demo-cpu.folded -o out/demo.svg -- out/demo 3
"$stacksampler" record --mode wall --period 5ms --per-thread -o out/demo-wall.folded --invocations out/demo-trace.json -- out/demo 3
echo
echo "Hottest stacks (cpu mode):"
sort -t' ' -k2 -nr out/demo-cpu.folded | head -5 | sed 's/^/  /'
echo
echo "Wrote out/demo-cpu.folded and out/demo-wall.folded (collapsed stacks), out/demo.svg (flame graph: open it in a browser)"
echo "and out/demo-trace.json (the calls reconstructed in wall mode, Chrome trace format; open in ui.perfetto.dev or speedscope)."
