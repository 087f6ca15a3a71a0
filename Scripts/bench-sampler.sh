#!/usr/bin/env bash
# The sampler thread's cost per sample (at most 2 us) on the worst shape for its
# aggregation: Scripts/bench/bench_stacks.c, 4 threads over many distinct stacks, at 1 kHz,
# under the preload library, in cpu mode (the sampler drains and aggregates: the sample path
# alone) and in wall mode (it also schedules: reads each thread's CPU time and, for threads
# that run less than half the time, /proc to learn whether they sleep, before it signals them).
# Per run: samples, distinct stacks, the sampler thread's CPU time (from the summary), CPU per
# sample; then the median of the runs per mode.
#
#   Scripts/bench-sampler.sh [RUNS] [SECONDS]     (default 3 runs of 10 s; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
seconds="${2:-10}"
source Scripts/lib/build-dir.sh
work="${BENCH_WORK:-out/bench}/sampler"
mkdir -p "$work"
gcc -O2 -pthread Scripts/bench/bench_stacks.c -o "$work/bench_stacks"

for mode in cpu wall; do
  per_sample=()
  for run in $(seq "$runs"); do
    summary=$(STACKSAMPLER_MODE="$mode" STACKSAMPLER_PERIOD=1ms STACKSAMPLER_SUMMARY=- \
      STACKSAMPLER_OUTPUT="$work/profile.folded" LD_PRELOAD="$build/libStackSamplerPreload.so" \
      "$work/bench_stacks" "$seconds" 4 2>&1 >/dev/null)
    samples=$(sed -n 's/^stacksampler: \([0-9]*\) samples from.*/\1/p' <<<"$summary")
    sampler_ms=$(sed -n 's/.*sampler thread \([0-9.]*\) ms CPU.*/\1/p' <<<"$summary")
    stacks=$(wc -l < "$work/profile.folded")
    us=$(awk -v ms="$sampler_ms" -v n="$samples" 'BEGIN { printf "%.2f", ms * 1000 / n }')
    per_sample+=("$us")
    echo "$mode run $run: $samples samples, $stacks distinct stacks, sampler thread ${sampler_ms} ms CPU: $us us per sample"
  done
  median=$(printf '%s\n' "${per_sample[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "$mode mode: sampler thread CPU per sample, median of $runs runs: $median us (budget 2 us)"
done
