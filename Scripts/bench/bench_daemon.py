"""The `daemon` subcommand: the daemon over a long run. Tests/Programs/window_service.c (4 threads
serving requests through call chains of random depth) runs under the preload library in
continuous mode, windows written as rotating pprof files (3 kept) and served on the default
socket, with one HTTP request taken half-way. Reports each window's self-measured cost (the
profiler's share of one core: sampler thread, handlers, naming, the daemon's work on the window
before) and the service's largest resident size in each window after the first (text on stdout).

First run: cpu mode at 100 Hz, 60 s windows, for --seconds (default 600; the cost budget: at
most 1 % of a core). Second run: wall mode at 1 kHz, 20 s windows, for --wall-seconds (default
120; memory under the busiest sampling).

    python3 Scripts/bench/bench.py daemon [--seconds 600] [--wall-seconds 120]
"""
import os
import re
import shutil
import subprocess
import time

from bench_common import clean_env, lower_median


def _request_half_way(pid, mode, out):
    """Takes a 5 s folded profile from the daemon's default socket; says what came back."""
    socket = f"/tmp/stacksampler-{os.getuid()}/{pid}.sock"
    if not os.path.exists(socket) or not shutil.which("curl"):
        return "no socket"
    path = os.path.join(out, "request.folded")
    done = subprocess.run(["curl", "-s", "-o", path, "--unix-socket", socket,
                           f"http://localhost/debug/stacksampler/folded?seconds=5&mode={mode}"])
    if done.returncode != 0:
        return "no socket"
    with open(path) as f:
        return f"{sum(1 for _ in f)} stacks"


def _run(work, service, lib, label, mode, period, seconds, window):
    out = os.path.join(work, label)
    os.makedirs(out, exist_ok=True)
    env = clean_env()
    env.update({"STACKSAMPLER_CONTINUOUS": f"{window}s", "STACKSAMPLER_KEEP": "3", "STACKSAMPLER_MODE": mode,
                "STACKSAMPLER_PERIOD": period, "STACKSAMPLER_OUTPUT": os.path.join(out, "w-%t.pb.gz"),
                "STACKSAMPLER_SUMMARY": "-", "LD_PRELOAD": lib})
    with open(os.path.join(out, "stdout"), "w") as stdout, open(os.path.join(out, "stderr"), "w") as stderr:
        process = subprocess.Popen([service, str(seconds), "4", str(window), str(window)], env=env, stdout=stdout, stderr=stderr)
        time.sleep(seconds // 2)
        fetched = _request_half_way(process.pid, mode, out)
        process.wait()
    with open(os.path.join(out, "stderr")) as f:
        stderr_text = f.read()
    with open(os.path.join(out, "stdout")) as f:
        stdout_text = f.read()
    costs = [float(c) for c in re.findall(r"window \d+ of a continuous session.*profiler cost ([\d.]+) % of one core", stderr_text)]
    windows = len(re.findall(r"of a continuous session", stderr_text))
    # Resident size: the largest in each window (a session holds one window's stacks at a time,
    # so it rises within a window and falls at the cut).
    peaks = [int(p) for p in re.findall(r"^rss_kb_peak_\d+ (\d+)$", stdout_text, re.M)]
    whole = sorted(costs[:-1])  # the last window is the partial one at exit
    kept = sum(1 for name in os.listdir(out) if name.endswith(".pb.gz"))
    cost = f"min {whole[0]}, median {lower_median(whole):g}, max {whole[-1]}" if whole else "no whole window"
    rise = f"{max(peaks[1:]) - peaks[0]} KB" if len(peaks) > 1 else "?"
    print(f"{label} ({mode} mode, period {period}, {seconds} s, {window} s windows): {windows} windows; "
          f"cost per whole window, % of one core: {cost}; "
          f"resident size, largest in each window after the first (KB): {' '.join(map(str, peaks))} - the later ones at most "
          f"{rise} above the second window's; request on the default socket half-way: {fetched}; pprof files kept: {kept}",
          flush=True)


def cmd_daemon(args):
    work = os.path.join(args.work, "daemon")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    service = os.path.join(work, "window_service")
    subprocess.run(["gcc", "-O2", "-pthread", "Tests/Programs/window_service.c", "-o", service], check=True)
    _run(work, service, args.lib, "cpu100", "cpu", "10ms", int(args.seconds), 60)
    _run(work, service, args.lib, "wall1k", "wall", "1ms", int(args.wall_seconds), 20)
