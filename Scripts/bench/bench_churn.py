"""The `churn` subcommand: how cpu mode's timer engine counts short-lived threads at 10 ms (see
docs/design.md, "Short-lived threads in cpu mode"). Tests/Programs/churn.c runs threads of
100 us, 3 ms, 8 ms, 20 ms and 200 ms of CPU each, 50 alive at a time, and threads of 3 and 8 ms
one at a time; each run holds about --seconds of their CPU (at least 50 threads). Per run:
churn_fn's samples against the CPU the threads measured on their own clocks / the period (1 is
exact). --repeats rounds, each running every case once. Text on stdout, with the load of other
processes meanwhile.

    python3 Scripts/bench/bench.py churn [--repeats 3] [--seconds 4]
"""
import os
import subprocess

from bench_common import BenchError, LoadMeter, log, run_timed
from bench_shares import shares_from_folded_lines

PERIOD_NS = 10_000_000
# (microseconds of CPU per thread, threads alive at a time)
CASES = [(100, 50), (3000, 50), (8000, 50), (20000, 50), (200000, 50), (3000, 1), (8000, 1)]


def _churn_program(work):
    path = os.path.join(work, "churn")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Programs", "churn.c")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", path, source], check=True)
    return path


def _ratio(program, lib, microseconds, alive, seconds, work):
    """One run: (churn_fn samples, the threads' CPU / period)."""
    threads = max(50, round(seconds * 1e6 / microseconds))
    profile = os.path.join(work, "churn.folded")
    stdout = os.path.join(work, "churn.out")
    env = {"LD_PRELOAD": lib, "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_ENGINE": "timer", "STACKSAMPLER_PERIOD": "10ms",
           "STACKSAMPLER_OUTPUT": profile}
    run_timed([program, str(threads), "0", str(microseconds), str(alive)], env, stdout, os.path.join(work, "churn.err"))
    with open(stdout) as f:
        cpu = next((int(line.split()[1]) for line in f if line.startswith("churn_cpu_ns")), None)
    if cpu is None:
        raise BenchError(f"churn printed no churn_cpu_ns line in {stdout}")
    with open(profile) as f:
        counts, _ = shares_from_folded_lines(f, ["churn_fn"])
    return counts["churn_fn"], cpu / PERIOD_NS


def cmd_churn(args):
    work = os.path.join(args.work, "churn")
    os.makedirs(work, exist_ok=True)
    program = _churn_program(work)
    runs = {case: [] for case in CASES}
    with LoadMeter() as meter:
        for repeat in range(args.repeats):
            for microseconds, alive in CASES:
                samples, expected = _ratio(program, args.lib, microseconds, alive, args.seconds, work)
                runs[(microseconds, alive)].append((samples, expected))
                log(f"churn: round {repeat + 1}, {microseconds} us threads, {alive} alive: {samples} samples, "
                    f"CPU / period {expected:.1f}")
    print(f"churn_fn samples / (its CPU / 10 ms), timer engine, {args.repeats} runs of about {args.seconds:g} s of "
          f"thread CPU each (other processes kept {meter.result['other_cores']} cores busy; load average "
          f"{meter.result['loadavg_start']:.1f} at the start; {meter.result['seconds']} s in all)")
    for (microseconds, alive), results in runs.items():
        length = f"{microseconds} us" if microseconds < 1000 else f"{microseconds // 1000} ms"
        ratios = " ".join(f"{samples / expected:.2f}" for samples, expected in results)
        counts = " ".join(f"{samples}/{expected:.0f}" for samples, expected in results)
        print(f"threads of {length}, {alive} alive at a time: {ratios} (samples/expected {counts})")
