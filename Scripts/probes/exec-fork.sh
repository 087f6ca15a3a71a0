#!/usr/bin/env bash
# exec and fork under StackSampler in wall mode at 1 ms with %p, many more times than the
# test suite does (Tests/Programs/execer.c; each run bounded by a timeout, so a hang counts):
#   - RUNS runs of a program that works 20 ms and execs /bin/true;
#   - one process that execs itself RUNS times in a chain (same pid, each image 20 ms of work);
#   - 50 rounds of 20 children forked at once, half of which exec /bin/true;
#   - 60 runs of a program that forks 20 children at once, which exit at once (a
#     child used to hang in its exit handler on a Swift runtime lock the parent's sampler thread
#     held at the fork, 13 of 60 runs before the fix);
#   - RUNS children forked one by one while two threads hold the loader's lock in
#     dl_iterate_phdr (Tests/Programs/fork_loader.c), in cpu and wall mode, and 60 under
#     `record --follow-children` (a child hung in fork() on the loader's write lock,
#     38 and 50 of 200 and 21 of 60 before the fix).
#
#   Scripts/probes/exec-fork.sh [RUNS]     (default 200)
#
# Prints one line per case and exits non-zero if any run failed or hung.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-200}"
source Scripts/lib/build-dir.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/execer" Tests/Programs/execer.c
gcc -O2 -pthread -o "$work/fork_loader" Tests/Programs/fork_loader.c
gcc -O2 -shared -fPIC -o "$work/plugin.so" Tests/Programs/plugin.c
library="$build/libStackSamplerPreload.so"
status=0

# Runs execer with ARGS COUNT times under the profiler; prints a line LABEL: counts.
check() {
  local label="$1" count="$2"; shift 2
  local passed=0 failed=0 hung=0 start code
  start=$(date +%s%N)
  for _ in $(seq "$count"); do
    rm -f "$work"/out-*
    set +e
    # The environment goes to the program, not to timeout (a preloaded timeout would be profiled too).
    timeout -s KILL 120 env STACKSAMPLER_MODE=wall STACKSAMPLER_PERIOD=1ms STACKSAMPLER_OUTPUT="$work/out-%p.folded" \
      LD_PRELOAD="$library" "$work/execer" "$@" >"$work/stdout" 2>"$work/stderr"
    code=$?
    set -e
    if [ "$code" -eq 0 ]; then passed=$((passed + 1))
    elif [ "$code" -eq 137 ]; then hung=$((hung + 1))
    else failed=$((failed + 1)); echo "$label: status $code: $(head -c 300 "$work/stderr")" >&2
    fi
  done
  local tenths=$(( ($(date +%s%N) - start) / 100000000 ))
  echo "$label: $count runs, $passed exited 0, $failed failed, $hung hung (killed after 120 s); $((tenths / 10)).$((tenths % 10)) s in all"
  [ "$failed" -eq 0 ] && [ "$hung" -eq 0 ] || status=1
}

check "work 20 ms, then exec /bin/true" "$runs" chain 0
check "a chain of $runs execs of itself" 1 chain "$((runs - 1))"
check "50 rounds of 20 children, half exec" 1 rounds 50 20
check "20 children forked at once" 60 burst 20

# fork_loader COUNT children (every one waited for at most 5 s), through COMMAND...; prints LABEL:
# its counts and how many children said they were not profiled.
check_loader() {
  local label="$1" count="$2"; shift 2
  set +e
  "$@" "$work/fork_loader" "$count" "$work/plugin.so" "$count" >"$work/stdout" 2>"$work/stderr"
  set -e
  local counts refused
  counts="$(grep -E '^(forked|hung|failed) ' "$work/stdout" | tr '\n' ' ')"
  refused="$(grep -c "loader's lock was held at fork" "$work/stderr" || true)"
  echo "$label: ${counts}($refused not profiled: the loader's lock was held at fork)"
  grep -q '^hung 0$' "$work/stdout" && grep -q '^failed 0$' "$work/stdout" || status=1
}

for mode in cpu wall; do
  check_loader "$runs children forked during dl_iterate_phdr, $mode mode" "$runs" \
    env STACKSAMPLER_MODE="$mode" STACKSAMPLER_PERIOD=1ms STACKSAMPLER_OUTPUT="$work/loader-%p.folded" LD_PRELOAD="$library"
done
check_loader "60 children forked during dl_iterate_phdr, record --follow-children" 60 \
  "$build/stacksampler" record --follow-children --period 1ms -o "$work/loader-tree.folded" --
exit "$status"
