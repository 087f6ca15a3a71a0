#!/usr/bin/env bash
# The daemon over a long run (issue 13): Tests/Programs/window_service.c (4 threads serving
# requests through call chains of random depth) runs under the preload library in continuous
# mode, 60 s windows written as rotating pprof files (3 kept) and served on the default socket,
# with one HTTP request taken half-way. Reports each window's self-measured cost (the
# profiler's share of one core: sampler thread, handlers, naming, the daemon's work on the
# window before) and the service's resident size after the first window and at its largest.
#
#   Scripts/bench-daemon.sh [CPU_SECONDS] [WALL_SECONDS]   (default 600 and 120; needs a release build)
#
# First run: cpu mode at 100 Hz for CPU_SECONDS (the cost budget: at most 1 % of a core).
# Second run: wall mode at 1 kHz for WALL_SECONDS (memory under the busiest sampling).
set -euo pipefail
cd "$(dirname "$0")/.."
cpu_seconds="${1:-600}"
wall_seconds="${2:-120}"
build="${STACKSAMPLER_BUILD_DIR:-$PWD/.build/release}"
work="${BENCH_WORK:-out/bench}/daemon"
rm -rf "$work"
mkdir -p "$work"
gcc -O2 -pthread Tests/Programs/window_service.c -o "$work/window_service"

run() {
  local label="$1" mode="$2" period="$3" seconds="$4"
  local out="$work/$label"
  mkdir -p "$out"
  STACKSAMPLER_CONTINUOUS=60s STACKSAMPLER_KEEP=3 STACKSAMPLER_MODE="$mode" STACKSAMPLER_PERIOD="$period" \
    STACKSAMPLER_OUTPUT="$out/w-%t.pb.gz" STACKSAMPLER_SUMMARY=- LD_PRELOAD="$build/libStackSamplerPreload.so" \
    "$work/window_service" "$seconds" 4 62 >"$out/stdout" 2>"$out/stderr" &
  local pid=$!
  sleep $(( seconds / 2 ))
  local socket="/tmp/stacksampler-$(id -u)/$pid.sock"
  local fetched="no socket"
  if [ -S "$socket" ] && command -v curl >/dev/null; then
    curl -s -o "$out/request.folded" --unix-socket "$socket" "http://localhost/debug/stacksampler/folded?seconds=5&mode=$mode" &&
      fetched="$(wc -l <"$out/request.folded") stacks"
  fi
  wait "$pid"
  local costs rss_start rss_max rss_end windows
  costs=$(sed -n 's/.*window [0-9]* of a continuous session.*profiler cost \([0-9.]*\) % of one core.*/\1/p' "$out/stderr")
  windows=$(grep -c 'of a continuous session' "$out/stderr" || true)
  rss_start=$(sed -n 's/^rss_kb_start //p' "$out/stdout")
  rss_max=$(sed -n 's/^rss_kb_max //p' "$out/stdout")
  rss_end=$(sed -n 's/^rss_kb_end //p' "$out/stdout")
  local whole
  whole=$(head -n -1 <<<"$costs" | sort -n)
  echo "$label ($mode mode, period $period, ${seconds} s, 60 s windows): $windows windows;" \
    "cost per whole window, % of one core: min $(head -1 <<<"$whole"), median $(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' <<<"$whole"), max $(tail -1 <<<"$whole");" \
    "resident size after the first window ${rss_start} KB, largest after it ${rss_max} KB (+$(( rss_max - rss_start )) KB), at the end ${rss_end} KB;" \
    "request on the default socket half-way: $fetched; pprof files kept: $(ls "$out" | grep -c '\.pb\.gz$')"
}

run cpu100 cpu 10ms "$cpu_seconds"
run wall1k wall 1ms "$wall_seconds"
