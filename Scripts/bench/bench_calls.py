"""The `calls` subcommand: what invocation tracking costs a continuous wall session.

Runs Tests/Programs/window_service.c (4 threads serving requests through call chains of random
depth) under the preload library in continuous wall mode at 100 Hz, 10 s windows, twice:
invocations off for at most 60 s (the reference cost), then on for --seconds
(`STACKSAMPLER_INVOCATIONS=1`, a calls table per window written). From each whole window's summary: samples, the sampler thread's CPU and the
profiler's cost as a share of one core; from the service: its largest resident size in each
window; and the tracker's own time per sample, which each window's summary gives (`tracking N ns
per sample`: monotonic time around each sample on the sampler thread; the first window, which
loads the symbol tables, apart).

    python3 Scripts/bench/bench.py calls --work out/bench --lib .build/release/libStackSamplerPreload.so --seconds 60

`redis-calls` does the same on a real service: redis-server (from Debian, its own jemalloc's
background threads made without the pthread_create hook) under redis-benchmark's load (20
clients, GET and SET) for --seconds, invocations on; the profiler's cost per whole window after
the first, and the first's (which loads the symbol tables) apart.
"""
import os
import re
import shutil
import statistics
import subprocess
import time

from bench_common import BenchError, log, save

WINDOW_SECONDS = 10
SUMMARY = re.compile(r"stacksampler: (\d+) samples from .*\n(?:.*\n)*?.*sampler thread ([\d.]+) ms CPU.*\n(?:.*\n)*?"
                     r".*window (\d+) of a continuous session.*profiler cost ([\d.]+) % of one core")


def session_env(args, out, invocations):
    """The environment of a continuous wall session at 100 Hz with `WINDOW_SECONDS` windows written
    to `out` (a calls table per window too with `invocations`), the summary on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKSAMPLER_") and k != "LD_PRELOAD"}
    env.update({"LD_PRELOAD": args.lib, "STACKSAMPLER_CONTINUOUS": f"{WINDOW_SECONDS}s", "STACKSAMPLER_MODE": "wall",
                "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_OUTPUT": os.path.join(out, "w-%t.pb.gz"),
                "STACKSAMPLER_KEEP": "2"})
    if invocations:
        env.update({"STACKSAMPLER_INVOCATIONS": "1", "STACKSAMPLER_CALLS": os.path.join(out, "calls-%t.json")})
    return env


def whole_windows(stderr, label):
    """(window, samples, sampler ms, cost %) of each whole window in a session's summaries (the last,
    cut at exit, left out)."""
    windows = [(int(w), int(n), float(ms), float(cost)) for n, ms, w, cost in SUMMARY.findall(stderr)]
    if len(windows) < 2:
        raise BenchError(f"no whole window in {label}: run at least {2 * WINDOW_SECONDS} s")
    return windows[:-1]


def run(args, service, label, invocations, seconds):
    out = os.path.join(args.work, "calls-" + label)
    os.makedirs(out, exist_ok=True)
    log(f"calls: {label}, {seconds} s")
    done = subprocess.run([service, str(seconds), "4", str(WINDOW_SECONDS), str(WINDOW_SECONDS)], env=session_env(args, out, invocations),
                          capture_output=True, text=True, check=True)
    whole = whole_windows(done.stderr, label)
    peaks = [int(m) for m in re.findall(r"^rss_kb_peak_\d+ (\d+)$", done.stdout, re.M)]
    tracking = [int(t) for t in re.findall(r"tracking (\d+) ns per sample", done.stderr)]
    samples = sum(n for _, n, _, _ in whole)
    sampler_ms = sum(ms for _, _, ms, _ in whole)
    return {"windows": len(whole), "samples": samples, "sampler_ns_per_sample": sampler_ms * 1e6 / samples,
            "cost_percent": [c for _, _, _, c in whole], "rss_kb_peaks": peaks, "tracking_ns_per_sample": tracking}


def cmd_calls(args):
    service = os.path.join(args.work, "window_service")
    subprocess.run(["gcc", "-O2", "-pthread", "Tests/Programs/window_service.c", "-o", service], check=True)
    off = run(args, service, "off", False, int(min(args.seconds, 60)))
    on = run(args, service, "on", True, int(args.seconds))
    tracking = on["tracking_ns_per_sample"]
    if len(tracking) < 3:
        raise BenchError(f"{len(tracking)} windows with tracking figures: run at least {3 * WINDOW_SECONDS} s")
    result = {"seconds": args.seconds, "off": off, "on": on, "tracker_ns_per_sample": statistics.median(tracking[1:-1])}
    save(args.work, "calls", result)
    peaks = on["rss_kb_peaks"]
    print(f"calls ({min(args.seconds, 60):.0f} s off, {args.seconds:.0f} s on, wall 100 Hz, 4 threads, {WINDOW_SECONDS} s windows): "
          f"the tracker {result['tracker_ns_per_sample']:.0f} ns per sample (median of the whole windows after the first: "
          f"{' '.join(map(str, tracking[1:-1]))}; the first, loading symbol tables: {tracking[0]}); sampler thread in all "
          f"{off['sampler_ns_per_sample']:.0f} ns per sample without invocations, {on['sampler_ns_per_sample']:.0f} ns with; "
          f"profiler cost with invocations, % of one core per whole window: median {statistics.median(on['cost_percent']):.2f}, "
          f"max {max(on['cost_percent']):.2f} (without: median {statistics.median(off['cost_percent']):.2f}); "
          f"resident size, largest in each window (KB): {' '.join(map(str, peaks))}"
          + (_growth(peaks) if len(peaks) > 1 else ""))


def _growth(peaks):
    """How the later windows' resident sizes stand against the first's."""
    growth = max(peaks[1:]) - peaks[0]
    return f" - the later ones at most {growth} KB above the first" if growth > 0 else " - none above the first"


def cmd_redis_calls(args):
    missing = [tool for tool in ("redis-server", "redis-benchmark", "redis-cli") if not shutil.which(tool)]
    if missing:
        raise BenchError(f"{', '.join(missing)} not found: Scripts/setup.sh installs redis-server (and its tools)")
    out = os.path.join(args.work, "calls-redis")
    os.makedirs(out, exist_ok=True)
    port = "6391"
    log(f"redis-calls: redis-server under redis-benchmark, {args.seconds:.0f} s")
    server = subprocess.Popen(["redis-server", "--port", port, "--save", "", "--appendonly", "no"], env=session_env(args, out, True),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.1)
        else:
            raise BenchError("redis-server did not answer on port " + port)
        subprocess.run(["timeout", str(int(args.seconds)), "redis-benchmark", "-p", port, "-n", "1000000000", "-c", "20", "-q",
                        "-t", "get,set"], capture_output=True)
    finally:
        subprocess.run(["redis-cli", "-p", port, "shutdown", "nosave"], capture_output=True)
        stderr = server.communicate(timeout=60)[1]
    whole = whole_windows(stderr, "redis")
    first, later = whole[0], whole[1:]
    if not later:
        raise BenchError(f"one whole window only: run at least {3 * WINDOW_SECONDS} s")
    costs = [cost for _, _, _, cost in later]
    result = {"seconds": args.seconds, "windows": later, "cost_percent": costs, "first_window_cost_percent": first[3]}
    save(args.work, "redis-calls", result)
    print(f"redis-calls ({args.seconds:.0f} s, wall 100 Hz, invocations on, {WINDOW_SECONDS} s windows): profiler cost, % of one "
          f"core per whole window after the first: median {statistics.median(costs):.2f}, max {max(costs):.2f} "
          f"({' '.join(f'{c:.2f}' for c in costs)}; the first, loading symbol tables: {first[3]:.2f}); sampler thread {statistics.median(ms for _, _, ms, _ in later):.1f} ms "
          f"a window, {statistics.median(n for _, n, _, _ in later)} samples")
