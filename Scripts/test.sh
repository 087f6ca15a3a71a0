#!/usr/bin/env bash
# Builds StackSampler (release products for the end-to-end tests) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
swift build -c release
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
export STACKSAMPLER_BUILD_DIR="$PWD/.build/release"
# The real Swift services the end-to-end tests profile (Tests/Services), built in release as
# services are deployed; built here so that their build time is counted apart from the tests'.
for service in Tests/Services/*/; do
  name=$(basename "$service")
  echo "test.sh: building $service in release" >&2
  start=$SECONDS
  swift build -c release --package-path "$service" --scratch-path ".build-$name"
  echo "test.sh: built $service in $((SECONDS - start)) s" >&2
done
if [ $# -gt 0 ]; then
  swift test "$@" 2>&1 | tee "$log" || status=$?
else
  # The end-to-end tests after the others, not beside them: they run real programs under the
  # profiler and compare what it saw with what the programs measured, on a machine whose load
  # they set themselves (busy cores where a test asks for them); the unit tests, some of which
  # profile their own process, would otherwise load both cores at random moments.
  swift test --skip EndToEndTests 2>&1 | tee "$log" || status=$?
  swift test --skip-build --filter EndToEndTests 2>&1 | tee -a "$log" || status=$?
fi
# Setup installs every tool the tests use, so nothing should skip; say so if something did, with
# each test's reason: skipped before it ran (a trait's condition) or cancelled while running.
if grep -qE '^[^[:space:]]+ (Test|Suite) .*( skipped| was cancelled)' "$log"; then
  echo "test.sh: tests that did not run (a tool could not be installed?):"
  grep -E '^[^[:space:]]+ (Test|Suite) .*( skipped| was cancelled)' "$log" | sed 's/^/  /'
fi
exit "$status"
