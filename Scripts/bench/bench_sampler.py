"""The `sampler` subcommand: the sampler thread's cost per sample (at most 2 us) on the worst
shape for its aggregation: Scripts/bench/bench_stacks.c, 4 threads over many distinct stacks,
at 1 kHz, under the preload library, in cpu mode (the sampler drains and aggregates: the sample
path alone) and in wall mode (it also schedules: reads each thread's CPU time and, for threads
that run less than half the time, /proc to learn whether they sleep, before it signals them).
Per run: samples, distinct stacks, the sampler thread's CPU time (from the summary), CPU per
sample; then the median of the runs per mode (text on stdout).

    python3 Scripts/bench/bench.py sampler [--repeats 3] [--seconds 10]
"""
import os
import re
import subprocess

from bench_common import BenchError, clean_env, lower_median


def _run(program, lib, mode, seconds, profile):
    env = clean_env()
    env.update({"STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-",
                "STACKSAMPLER_OUTPUT": profile, "LD_PRELOAD": lib})
    summary = subprocess.run([program, f"{seconds:g}", "4"], env=env, check=True, capture_output=True, text=True).stderr
    samples = re.search(r"^stacksampler: (\d+) samples from", summary, re.M)
    sampler_ms = re.search(r"sampler thread ([\d.]+) ms CPU", summary)
    if not samples or not sampler_ms:
        raise BenchError(f"no summary from {program} in {mode} mode:\n{summary[-2000:]}")
    return int(samples.group(1)), float(sampler_ms.group(1))


def cmd_sampler(args):
    work = os.path.join(args.work, "sampler")
    os.makedirs(work, exist_ok=True)
    program = os.path.join(work, "bench_stacks")
    subprocess.run(["gcc", "-O2", "-pthread", "Scripts/bench/bench_stacks.c", "-o", program], check=True)
    profile = os.path.join(work, "profile.folded")
    for mode in ("cpu", "wall"):
        per_sample = []
        for run in range(1, args.repeats + 1):
            samples, sampler_ms = _run(program, args.lib, mode, args.seconds, profile)
            with open(profile) as f:
                stacks = sum(1 for _ in f)
            us = sampler_ms * 1000 / samples
            per_sample.append(us)
            print(f"{mode} run {run}: {samples} samples, {stacks} distinct stacks, sampler thread {sampler_ms} ms CPU: "
                  f"{us:.2f} us per sample", flush=True)
        print(f"{mode} mode: sampler thread CPU per sample, median of {args.repeats} runs: {lower_median(per_sample):.2f} us "
              "(budget 2 us)", flush=True)
