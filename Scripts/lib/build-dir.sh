# Sourced by the demo, the probes and the flame-graph check: sets $build to the release build
# directory ($STACKSAMPLER_BUILD_DIR, else .build/release, built now if the CLI is missing).
build="${STACKSAMPLER_BUILD_DIR:-$PWD/.build/release}"
if [ ! -x "$build/stacksampler" ]; then
  Scripts/setup.sh
  swift build -c release
  build="$PWD/.build/release"
fi
