#!/usr/bin/env bash
# Builds StackSampler (release products for the end-to-end tests) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
swift build -c release
STACKSAMPLER_BUILD_DIR="$PWD/.build/release" swift test "$@"
