#!/usr/bin/env bash
# Runs the loader-lock hazard (Tests/Programs/loader_churn.cpp: dlopen/dlclose, C++ exceptions
# and dl_iterate_phdr on three threads) many times under StackSampler at 1 ms, in cpu and wall
# mode, each run bounded by a timeout, and counts the runs that finished, failed or hung.
#
#   Scripts/probes/loader-lock.sh [RUNS_PER_MODE]     (default 100)
#
# Prints one line per mode and exits non-zero if any run hung or failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-100}"
source Scripts/lib/build-dir.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
g++ -O2 -pthread -o "$work/loader_churn" Tests/Programs/loader_churn.cpp
gcc -O2 -shared -fPIC -o "$work/plugin.so" Tests/Programs/plugin.c
library="$build/libStackSamplerPreload.so"
status=0
for mode in cpu wall; do
  finished=0 failed=0 hung=0
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do
    set +e
    # The environment goes to the program, not to timeout: a preloaded timeout would be the
    # profiled process, and its child (without %p in the output path) would not be profiled.
    timeout -s KILL 60 env STACKSAMPLER_MODE=$mode STACKSAMPLER_PERIOD=1ms STACKSAMPLER_OUTPUT="$work/out.folded" \
      LD_PRELOAD="$library" "$work/loader_churn" 1500 "$work/plugin.so" >"$work/stdout" 2>"$work/stderr"
    code=$?
    set -e
    if [ "$code" -eq 0 ] && ! grep -q '^dlclose_refresh_us' "$work/stdout"; then
      echo "run was not profiled (no dlclose_refresh_us line): $(head -c 300 "$work/stderr")" >&2; failed=$((failed + 1))
    elif [ "$code" -eq 0 ]; then finished=$((finished + 1))
    elif [ "$code" -eq 137 ]; then hung=$((hung + 1))
    else failed=$((failed + 1)); echo "run failed with status $code: $(head -c 300 "$work/stderr")" >&2
    fi
  done
  tenths=$(( ($(date +%s%N) - start) / 100000000 ))
  echo "loader lock, $mode mode at 1 ms: $runs runs, $finished finished, $failed failed, $hung hung (killed after 60 s); $((tenths / 10)).$((tenths % 10)) s in all"
  [ "$failed" -eq 0 ] && [ "$hung" -eq 0 ] || status=1
done
exit "$status"
