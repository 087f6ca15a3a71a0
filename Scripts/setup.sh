#!/usr/bin/env bash
# Installs the Debian packages StackSampler needs, only those missing. Idempotent.
set -euo pipefail

# libunwind-dev: not used by StackSampler itself; a test program (own_libunwind.c), the
# benchmark's reference walk (Scripts/probes/unwind_probe.c) and the walk the engine's is compared
# with frame by frame (Tests/Programs/unwind_diff.c, on xz-utils' xz and python3 among others) use it. rustc: a test profiles a
# real Rust program (8 KiB alternate signal stacks on every thread). chromium, python3 and
# fonts-dejavu-core: a test opens the flame graph SVG in headless Chromium and clicks it;
# golang-go: a test reads our pprof files with `go tool pprof`. libmicrohttpd-dev (header) and
# libmicrohttpd12 (loaded at run time, only when STACKSAMPLER_LISTEN asks for a listener): the HTTP
# endpoints, which a test fetches with curl. libcurl4-openssl-dev: the HTTP client's header
# (libcurl itself is loaded with dlopen only when the daemon pushes or the CLI fetches).
# nginx, redis-server and apache2-utils (for `ab`): tests run real services that fork (a
# daemonizing nginx and redis-server, nginx's pre-forked workers under ab's load) under the daemon.
# nodejs: a test profiles JIT code (V8's, no CFI) with `node --perf-basic-prof`. wrk: loads the
# Hummingbird service the tests profile (Tests/Services/hb-service).
# python3-pip: installs opentelemetry-proto below. systemd (for systemd-analyze) and util-linux
# (setpriv): the tests play a hardened unit's SystemCallFilter=@system-service and run programs
# as an ordinary user; linux-libc-dev numbers the system calls (<asm/unistd_64.h>).
required=(libunwind-dev libelf-dev libdw-dev liblzma-dev zlib1g-dev gcc rustc systemd util-linux linux-libc-dev
          chromium python3 fonts-dejavu-core golang-go libmicrohttpd-dev libmicrohttpd12 curl libcurl4-openssl-dev
          nginx redis-server apache2-utils xz-utils g++ nodejs python3-pip wrk)
missing=()
for pkg in "${required[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# opentelemetry-proto (PyPI): the OTLP push tests decode what the profiler sends with
# OpenTelemetry's official protobuf definitions (Tests/Programs/otlp_collector.py), for the
# python3 the tests run (the first on PATH). Debian's own python3 refuses pip installs outside a
# virtual environment unless told (PEP 668). Pinned: the profiles signal is still in development
# and its layout changes between versions; the encoder follows this one's (ProfilesDictionary).
otel_proto=opentelemetry-proto==1.45.2
if ! python3 -c "import importlib.metadata as m; assert m.version('opentelemetry-proto') == '${otel_proto#*==}'" 2>/dev/null; then
  echo "setup: installing $otel_proto for $(command -v python3)" >&2
  python3 -m pip install --quiet "$otel_proto" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "$otel_proto"
fi
command -v swift >/dev/null || { echo "setup: swift not found on PATH (expected the Swift 6 toolchain)" >&2; exit 1; }
