# Sourced by the check and benchmark scripts: sets $build to the release build directory
# ($STACKSAMPLER_BUILD_DIR, else .build/release, built now if the CLI is missing).
build="${STACKSAMPLER_BUILD_DIR:-$PWD/.build/release}"
if [ ! -x "$build/stacksampler" ]; then
  Scripts/setup.sh
  swift build -c release
  build="$PWD/.build/release"
fi
