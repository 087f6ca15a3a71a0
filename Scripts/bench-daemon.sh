#!/usr/bin/env bash
# The daemon over a long run: Tests/Programs/window_service.c (4 threads serving
# requests through call chains of random depth) runs under the preload library in continuous
# mode, windows written as rotating pprof files (3 kept) and served on the default socket,
# with one HTTP request taken half-way. Reports each window's self-measured cost (the
# profiler's share of one core: sampler thread, handlers, naming, the daemon's work on the
# window before) and the service's largest resident size in each window after the first.
#
#   Scripts/bench-daemon.sh [CPU_SECONDS] [WALL_SECONDS]   (default 600 and 120; needs a release build)
#
# First run: cpu mode at 100 Hz, 60 s windows, for CPU_SECONDS (the cost budget: at most 1 % of a core).
# Second run: wall mode at 1 kHz, 20 s windows, for WALL_SECONDS (memory under the busiest sampling).
set -euo pipefail
cd "$(dirname "$0")/.."
cpu_seconds="${1:-600}"
wall_seconds="${2:-120}"
source Scripts/lib/build-dir.sh
work="${BENCH_WORK:-out/bench}/daemon"
rm -rf "$work"
mkdir -p "$work"
gcc -O2 -pthread Tests/Programs/window_service.c -o "$work/window_service"

run() {
  local label="$1" mode="$2" period="$3" seconds="$4" window="$5"
  local out="$work/$label"
  mkdir -p "$out"
  # Resident size: the largest in each window after the first (a session holds one window's
  # stacks at a time, so it rises within a window and falls at the cut).
  STACKSAMPLER_CONTINUOUS="${window}s" STACKSAMPLER_KEEP=3 STACKSAMPLER_MODE="$mode" STACKSAMPLER_PERIOD="$period" \
    STACKSAMPLER_OUTPUT="$out/w-%t.pb.gz" STACKSAMPLER_SUMMARY=- LD_PRELOAD="$build/libStackSamplerPreload.so" \
    "$work/window_service" "$seconds" 4 "$window" "$window" >"$out/stdout" 2>"$out/stderr" &
  local pid=$!
  sleep $(( seconds / 2 ))
  local socket="/tmp/stacksampler-$(id -u)/$pid.sock"
  local fetched="no socket"
  if [ -S "$socket" ] && command -v curl >/dev/null; then
    curl -s -o "$out/request.folded" --unix-socket "$socket" "http://localhost/debug/stacksampler/folded?seconds=5&mode=$mode" &&
      fetched="$(wc -l <"$out/request.folded") stacks"
  fi
  wait "$pid"
  local costs windows peaks first highest
  costs=$(sed -n 's/.*window [0-9]* of a continuous session.*profiler cost \([0-9.]*\) % of one core.*/\1/p' "$out/stderr")
  windows=$(grep -c 'of a continuous session' "$out/stderr" || true)
  peaks=$(sed -n 's/^rss_kb_peak_[0-9]* //p' "$out/stdout")
  first=$(head -1 <<<"$peaks")
  highest=$(tail -n +2 <<<"$peaks" | sort -n | tail -1)
  local whole
  whole=$(head -n -1 <<<"$costs" | sort -n)
  echo "$label ($mode mode, period $period, ${seconds} s, ${window} s windows): $windows windows;" \
    "cost per whole window, % of one core: min $(head -1 <<<"$whole"), median $(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' <<<"$whole"), max $(tail -1 <<<"$whole");" \
    "resident size, largest in each window after the first (KB): $(tr '\n' ' ' <<<"$peaks")- the later ones at most $(( highest - first )) KB above the second window's;" \
    "request on the default socket half-way: $fetched; pprof files kept: $(ls "$out" | grep -c '\.pb\.gz$')"
}

run cpu100 cpu 10ms "$cpu_seconds" 60
run wall1k wall 1ms "$wall_seconds" 20
