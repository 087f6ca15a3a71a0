#!/usr/bin/env bash
# Export sizes and times for a synthetic profile of N unique stacks (default 100000): each
# stack 8 to 40 frames deep under `main`, names drawn from pools that widen with depth (so
# the tree branches like a real one), a unique leaf per stack, 1 to 100 samples each.
# Times are for `stacksampler report` (read + convert + write), wall and CPU, best of 3; the
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

# Best of 3 runs of a command: "WALL_MS CPU_MS" (CPU = user + system, which other load on the
# machine disturbs less than wall time).
best_of_3() {
  local best_wall="" best_cpu="" timing wall user system cpu
  for _ in 1 2 3; do
    timing=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1 )
    read -r wall user system <<<"$timing"
    wall=$(awk -v w="$wall" 'BEGIN { printf "%d", w * 1000 }')
    cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%d", (u + s) * 1000 }')
    if [ -z "$best_wall" ] || [ "$wall" -lt "$best_wall" ]; then best_wall=$wall; fi
    if [ -z "$best_cpu" ] || [ "$cpu" -lt "$best_cpu" ]; then best_cpu=$cpu; fi
  done
  echo "$best_wall $best_cpu"
}

printf '%-16s %10s %10s %10s\n' format "wall (ms)" "cpu (ms)" "size (KB)"
read -r wall cpu <<<"$(best_of_3 "$build/stacksampler" report "$work/input.folded" --top 1)"
printf '%-16s %10s %10s %10s\n' "read + top" "$wall" "$cpu" "-"
for output in out.folded out.svg out.pb.gz out.speedscope.json; do
  read -r wall cpu <<<"$(best_of_3 "$build/stacksampler" report "$work/input.folded" -o "$work/$output")"
  printf '%-16s %10s %10s %10s\n' "${output#out.}" "$wall" "$cpu" "$(du -k "$work/$output" | cut -f1)"
done
echo "flame graph boxes drawn: $(grep -c '^<g><title>' "$work/out.svg") (narrower than 0.1 px merged)"
