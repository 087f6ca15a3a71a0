#!/usr/bin/env bash
# Export sizes and times for a synthetic profile of N unique stacks (default 100000): each
# stack 8 to 40 frames deep under `main`, names drawn from pools that widen with depth (so
# the tree branches like a real one), a unique leaf per stack, 1 to 100 samples each.
# Times are wall-clock for `stacksampler report` (read + convert + write), best of 3; the
# `read + top` line is reading the stacks plus a one-line --top table (no output file).
# Usage: Scripts/bench-export.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/build-dir.sh
stacks="${1:-100000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

awk -v n="$stacks" 'BEGIN {
  srand(42)
  for (i = 0; i < n; i++) {
    depth = 8 + int(rand() * 33); line = "main"
    for (d = 0; d < depth; d++) line = line ";app::module" d "::Type" int(rand() * (3 + d * d)) "::method()"
    print line ";leaf_function_" i " " (1 + int(rand() * 100))
  }
}' >"$work/input.folded"
echo "input: $stacks unique stacks, $(awk '{ s += $NF } END { print s }' "$work/input.folded") samples, $(du -k "$work/input.folded" | cut -f1) KB folded"

best_of_3() {
  local best="" start end elapsed
  for _ in 1 2 3; do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    elapsed=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$elapsed" -lt "$best" ]; then best=$elapsed; fi
  done
  echo "$best"
}

printf '%-12s %10s %10s\n' format "time (ms)" "size (KB)"
printf '%-12s %10s %10s\n' "read + top" "$(best_of_3 "$build/stacksampler" report "$work/input.folded" --top 1)" "-"
for output in out.folded out.svg out.pb.gz out.speedscope.json; do
  ms=$(best_of_3 "$build/stacksampler" report "$work/input.folded" -o "$work/$output")
  printf '%-12s %10s %10s\n' "${output#out.}" "$ms" "$(du -k "$work/$output" | cut -f1)"
done
echo "flame graph boxes drawn: $(grep -c '^<g><title>' "$work/out.svg") (narrower than 0.1 px merged)"
