#!/usr/bin/env bash
# Handler time per sample with and without Swift async stacks, on
# Tests/Programs/async_stages.swift (swiftc -O -g) under the preload library, cpu mode at 1 ms:
# interleaved runs, the median of the runs' handler medians each way (from the summary); then
# the chain walk alone (Scripts/bench-async-chain.c).
#
#   Scripts/bench-async.sh [RUNS]     (default 7; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-7}"
source Scripts/lib/build-dir.sh
work="${BENCH_WORK:-out/bench}/async"
mkdir -p "$work"
swiftc -O -g -parse-as-library Tests/Programs/async_stages.swift -o "$work/async_stages"

# The handler's median (us) in one run with STACKSAMPLER_ASYNC_STACKS=$1.
handler_median() {
  STACKSAMPLER_ASYNC_STACKS="$1" STACKSAMPLER_MODE=cpu STACKSAMPLER_PERIOD=1ms STACKSAMPLER_SUMMARY=- \
    STACKSAMPLER_OUTPUT="$work/profile.folded" LD_PRELOAD="$build/libStackSamplerPreload.so" \
    "$work/async_stages" 12 2>&1 >/dev/null | sed -n 's/.*profiler cost: handler \([0-9.]*\) us median.*/\1/p'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

with=(); without=()
for _ in $(seq "$runs"); do
  with+=("$(handler_median 1)")
  without+=("$(handler_median 0)")
done
echo "handler median, async stacks on:  $(printf '%s\n' "${with[@]}" | median) us (runs: ${with[*]})"
echo "handler median, async stacks off: $(printf '%s\n' "${without[@]}" | median) us (runs: ${without[*]})"

gcc -O2 -I CSupport/include Scripts/bench-async-chain.c -o "$work/chain" -L "$build" -lStackSamplerPreload -Wl,-rpath,"$build"
"$work/chain"
