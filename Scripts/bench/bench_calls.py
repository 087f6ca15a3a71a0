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
"""
import os
import re
import statistics
import subprocess

from bench_common import BenchError, log, save

WINDOW_SECONDS = 10
SUMMARY = re.compile(r"stacksampler: (\d+) samples from .*\n(?:.*\n)*?.*sampler thread ([\d.]+) ms CPU.*\n(?:.*\n)*?"
                     r".*window (\d+) of a continuous session.*profiler cost ([\d.]+) % of one core")


def run(args, service, label, invocations, seconds):
    out = os.path.join(args.work, "calls-" + label)
    os.makedirs(out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKSAMPLER_") and k != "LD_PRELOAD"}
    env.update({"LD_PRELOAD": args.lib, "STACKSAMPLER_CONTINUOUS": f"{WINDOW_SECONDS}s", "STACKSAMPLER_MODE": "wall",
                "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_OUTPUT": os.path.join(out, "w-%t.pb.gz"),
                "STACKSAMPLER_KEEP": "2"})
    if invocations:
        env.update({"STACKSAMPLER_INVOCATIONS": "1", "STACKSAMPLER_CALLS": os.path.join(out, "calls-%t.json")})
    log(f"calls: {label}, {seconds} s")
    done = subprocess.run([service, str(seconds), "4", str(WINDOW_SECONDS), str(WINDOW_SECONDS)], env=env,
                          capture_output=True, text=True, check=True)
    windows = [(int(w), int(n), float(ms), float(cost)) for n, ms, w, cost in SUMMARY.findall(done.stderr)]
    whole = windows[:-1]  # the last is the partial one at exit
    if not whole:
        raise BenchError(f"no whole window in {label}: run at least {2 * WINDOW_SECONDS} s")
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
          + (f" - the later ones at most {max(peaks[1:]) - peaks[0]} KB above the first" if len(peaks) > 1 else ""))
