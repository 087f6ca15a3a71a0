#!/usr/bin/env bash
# Benchmarks StackSampler against its budgets (slowdown at most 1 % at 100 Hz and 3 % at wall
# 1 kHz, handler at most 2 us a sample, start-up at most 0.5 ms idle and 3 ms profiling) and
# against gperftools' CPU profiler and perf, on fixed-work workloads (Scripts/bench/, and test
# programs of Tests/Programs told to do a fixed amount of work), and writes
# docs/benchmark-report.md; in each setting users run it in (root, an ordinary user,
# perf_event_open refused), wall 1 kHz against gperftools + 1 % and 1,000 sleepers within 2 % of a
# core. Takes about 35 minutes on the 2-core machine (12 of them the daemon's soak, 9 the
# settings). Each step is a subcommand of Scripts/bench/bench.py, which runs alone too
# (python3 Scripts/bench/bench.py --help).
#
#   Scripts/bench.sh [--quick] [--rounds N] [--seconds S] [--output FILE]
#
# --quick: 3 rounds of 0.5 s runs, 1 attribution run, 60 start-up runs, a 130 s daemon soak
#          (a smoke test of the script, not figures to publish).
# Environment: BENCH_SCRATCH (swift build scratch path, default .build-bench),
#              BENCH_WORK (scratch directory for binaries and results, default out/bench).
# --max-wait S: seconds the slowdown phase may wait in all, before its rounds, for other
#          processes to leave the cores (default 240).
# Results are ratios from interleaved runs; run it on a quiet machine (it reports how busy
# the other processes kept the cores).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=7
seconds=1.2
attribution_seconds=5
repeats=3
startup_runs=300
max_wait=240
deadlock_runs=300
daemon_seconds=600
output=docs/benchmark-report.md
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) rounds=3; seconds=0.5; repeats=1; startup_runs=60; attribution_seconds=2; max_wait=0; deadlock_runs=5; daemon_seconds=130; shift ;;
    --max-wait) max_wait="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$rounds" -ge 5 ] || [ "$rounds" -eq 3 ] || { echo "bench: use at least 5 rounds (medians of fewer mean little)" >&2; exit 2; }

scratch="${BENCH_SCRATCH:-.build-bench}"
work="${BENCH_WORK:-out/bench}"
bins="$work/bin"
started=$(date +%s)
step() { echo "bench: [$(( $(date +%s) - started ))s] $*" >&2; }
fail() { echo "bench: $*" >&2; exit 1; }

# --- Packages ---------------------------------------------------------------------------------
step "setup (project packages)"
Scripts/setup.sh

# Extra Debian packages for the comparison: gperftools' libprofiler and google-pprof; perf;
# hyperfine (optional: a loop of our own replaces it).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
apt_install() {
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
missing=()
for pkg in libgoogle-perftools-dev google-perftools; do installed "$pkg" || missing+=("$pkg"); done
command -v perf >/dev/null || missing+=(linux-perf)
if [ "${#missing[@]}" -gt 0 ]; then
  step "installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  apt_install "${missing[@]}" || fail "could not install ${missing[*]}"
fi
if ! command -v hyperfine >/dev/null; then
  apt_install hyperfine 2>/dev/null || echo "bench: hyperfine not available; using an own loop for start-up times" >&2
fi

# --- Tools ------------------------------------------------------------------------------------
for tool in swift swiftc gcc python3 perf google-pprof; do
  command -v "$tool" >/dev/null || fail "$tool not found on PATH"
done
[ -r /usr/lib/x86_64-linux-gnu/libprofiler.so ] || fail "gperftools' libprofiler.so missing (package libgoogle-perftools-dev)"
perf record -q -e cpu-clock -F 100 -g -o /dev/null -- true >/dev/null 2>&1 ||
  fail "perf record does not work here (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?))"

# --- Build ------------------------------------------------------------------------------------
step "building StackSampler (release, scratch path $scratch)"
mkdir -p "$work"
if ! swift build -c release --scratch-path "$scratch" >"$work/build.log" 2>&1; then
  tail -30 "$work/build.log" >&2
  fail "swift build failed (log: $work/build.log)"
fi
lib="$scratch/release/libStackSamplerPreload.so"
[ -f "$lib" ] || fail "$lib not built (log: $work/build.log)"

step "compiling workloads into $bins"
mkdir -p "$bins"
# split, threads and matrix are test programs (Tests/Programs), run with a fixed amount of work.
for program in split threads; do
  gcc -O2 -Wall -Wextra -Werror -pthread -o "$bins/$program" "Tests/Programs/$program.c"
done
for program in deep wall sleepers; do
  gcc -O2 -Wall -Wextra -Werror -pthread -o "$bins/bench_$program" "Scripts/bench/bench_$program.c"
done
g++ -O2 -Wall -Wextra -Werror -o "$bins/bench_exceptions" Scripts/bench/bench_exceptions.cpp
gcc -O2 -Wall -Wextra -Werror -o "$bins/deny_perf_events" Tests/Programs/deny_perf_events.c
gcc -O2 -Wall -Wextra -Werror -I Scripts/bench -o "$bins/hz_probe" Scripts/probes/hz_probe.c
gcc -O2 -Wall -Wextra -Werror -o "$bins/gap_probe" Scripts/probes/gap_probe.c
gcc -O2 -Wall -Wextra -Werror -I Scripts/bench -o "$bins/unwind_probe" Scripts/probes/unwind_probe.c -lunwind
swiftc -O -o "$bins/matrix" Tests/Programs/matrix.swift

# --- Measurements -----------------------------------------------------------------------------
helper=(python3 Scripts/bench/bench.py --work "$work" --bins "$bins" --lib "$lib")
step "machine facts"
"${helper[@]}" machine
step "calibrating workloads to ${seconds} s"
"${helper[@]}" calibrate --seconds "$seconds" --attribution-seconds "$attribution_seconds"
step "slowdown: 4 workloads x 9 configurations x $rounds interleaved rounds"
"${helper[@]}" slowdown --rounds "$rounds" --max-wait "$max_wait"
step "attribution: ${attribution_seconds} s runs at 100 Hz, $repeats per profiler"
"${helper[@]}" attribution --repeats "$repeats" --max-wait 60
step "handler time at 30-frame stacks, and a bare libunwind walk in a handler for reference"
"${helper[@]}" handler
step "start-up time of /bin/true, $startup_runs runs per variant"
"${helper[@]}" startup --runs "$startup_runs"
step "cpu mode's fixed costs: the sampler thread at 100 Hz, start-up while profiling"
"${helper[@]}" cpu-cost --rounds "$rounds" --seconds 4 --runs "$startup_runs" | tee "$work/cpu-cost.txt" >&2
step "cpu mode's engines against perf: rates, attribution, slowdown at 1 kHz and at equal delivered rates, cost per sample, page faults"
"${helper[@]}" engines --rounds "$rounds" --max-wait 60
step "wall mode's cost: sampler CPU per thread-tick, 8 busy threads at wall and cpu 1 kHz"
"${helper[@]}" wall-cost --rounds "$rounds" --seconds "$seconds" | tee "$work/wall_cost.md" >&2
step "where users run it: wall 1 kHz's slowdown as root, as an ordinary user and with perf_event_open refused, beside gperftools; 1,000 sleepers at 100 Hz"
"${helper[@]}" settings-cost --rounds "$rounds" --seconds "$seconds" | tee "$work/settings_cost.md" >&2
step "wall mode and blocking calls: the bursts program 100 times at 1 ms and at 10 ms, every core busy"
"${helper[@]}" eintr --runs 100 | tee "$work/eintr.md" >&2
step "sampler thread CPU per sample, many distinct stacks at 1 kHz"
"${helper[@]}" sampler --repeats "$repeats" --seconds "$attribution_seconds" | tee "$work/sampler.txt" >&2
step "loader lock: loader_churn under 1 kHz sampling, $deadlock_runs runs per mode"
STACKSAMPLER_BUILD_DIR="$PWD/$scratch/release" Scripts/probes/loader-lock.sh "$deadlock_runs" | tee "$work/deadlock.txt" >&2
step "the daemon: continuous 60 s windows for $daemon_seconds s (cpu 100 Hz) and 120 s (wall 1 kHz)"
"${helper[@]}" daemon --seconds "$daemon_seconds" --wall-seconds 120 | tee "$work/daemon.txt" >&2
step "unwinding: the engine's walk against libunwind's on real programs, $repeats runs each"
"${helper[@]}" unwind-agreement --repeats "$repeats"
"${helper[@]}" report --output "$output"
"${helper[@]}" report-unwind --output "$output"
step "done: $output"
