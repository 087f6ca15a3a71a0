#!/usr/bin/env bash
# Records the wall traces the unit tests replay (Tests/StackSamplerTests/WallTraces): the
# invocations program (Tests/Programs/invocations.c) profiled in wall mode through the preload
# library with STACKSAMPLER_WALL_TRACE set, in two settings (root, where the kernel gives
# context-switch rings and stack copies; an ordinary user with perf_event_open refused by a
# seccomp filter, where wall mode reads /proc), at 10 ms and 1 ms, quiet and with the cores kept
# busy; the program spins 0.3 s first, untimed, so that the engine runs by its first call (under
# load it starts late: docs/limits.md). Each trace NAME.trace comes with NAME.calls, the program's own timing of its calls.
# Run it again when a change makes the scheduler ask the kernel something else (the replay
# says where a trace and the scheduler part).
#
#   Scripts/record-wall-traces.sh [DIRECTORY]     (default Tests/StackSamplerTests/WallTraces)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-Tests/StackSamplerTests/WallTraces}")"
[ "$(id -u)" = 0 ] || { echo "record-wall-traces: run as root (the refused setting switches to an ordinary user)" >&2; exit 1; }
swift build -c release >/dev/null
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
chmod 755 "$work"
gcc -O2 -Wall -Wextra -Werror -o "$work/invocations" Tests/Programs/invocations.c
gcc -O2 -Wall -Wextra -Werror -o "$work/deny_perf_events" Tests/Programs/deny_perf_events.c
cp .build/release/libStackSamplerPreload.so .build/release/libStackSamplerPreloadSwift.so "$work/"
mkdir -p "$out" "$work/traces"
chmod 777 "$work/traces"

# record NAME SETTING PERIOD BUSY ROUNDS
record() {
  local name="$1" setting="$2" period="$3" busy="$4" rounds="$5" launcher=()
  [ "$setting" = refused ] && launcher=(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$work/deny_perf_events")
  local spinners=()
  if [ "$busy" = busy ]; then
    for _ in $(seq 0 "$(nproc)"); do sh -c 'while :; do :; done' & spinners+=($!); done
  fi
  "${launcher[@]}" env LD_PRELOAD="$work/libStackSamplerPreload.so" STACKSAMPLER_MODE=wall STACKSAMPLER_PERIOD="$period" \
    STACKSAMPLER_OUTPUT="$work/traces/$name.folded" STACKSAMPLER_WALL_TRACE="$work/traces/$name.trace" \
    "$work/invocations" "$rounds" 0.3 > "$work/traces/$name.out"
  [ ${#spinners[@]} -eq 0 ] || { kill "${spinners[@]}"; wait "${spinners[@]}" 2>/dev/null || true; }
  grep '^call ' "$work/traces/$name.out" > "$out/$name.calls"
  cp "$work/traces/$name.trace" "$out/$name.trace"
  echo "$name: $(wc -l < "$out/$name.trace") lines, $(grep -c '^call ' "$out/$name.calls") calls"
}

record invocations-root-10ms root 10ms quiet 3
record invocations-root-1ms-busy root 1ms busy 2
record invocations-refused-10ms refused 10ms quiet 3
record invocations-refused-1ms-busy refused 1ms busy 2
