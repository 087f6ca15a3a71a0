#!/usr/bin/env bash
# Builds StackSampler (release products for the end-to-end tests) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
swift build -c release
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
STACKSAMPLER_BUILD_DIR="$PWD/.build/release" swift test "$@" 2>&1 | tee "$log" || status=$?
# Setup installs every tool the tests use, so nothing should skip; say so if something did, with
# each test's reason: skipped before it ran (a trait's condition) or cancelled while running.
if grep -qE " skipped| was cancelled" "$log"; then
  echo "test.sh: tests that did not run (a tool could not be installed?):"
  grep -E " skipped| was cancelled" "$log" | sed 's/^/  /'
fi
exit "$status"
