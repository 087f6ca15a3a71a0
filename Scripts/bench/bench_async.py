"""The `async` subcommand: handler time per sample with and without Swift async stacks, on
Tests/Programs/async_stages.swift (swiftc -O -g) under the preload library, cpu mode at 1 ms:
interleaved runs (--rounds of each), the median of the runs' handler medians each way (from the
summary); then the chain walk alone (Scripts/bench/async_chain.c). Text on stdout.

    python3 Scripts/bench/bench.py async [--rounds 7]
"""
import os
import re
import subprocess

from bench_common import BenchError, clean_env, lower_median


def _handler_median(program, lib, async_stacks, profile):
    """The handler's median (us) in one run with STACKSAMPLER_ASYNC_STACKS=async_stacks."""
    env = clean_env()
    env.update({"STACKSAMPLER_ASYNC_STACKS": async_stacks, "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms",
                "STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_OUTPUT": profile, "LD_PRELOAD": lib})
    summary = subprocess.run([program, "12"], env=env, check=True, capture_output=True, text=True).stderr
    found = re.search(r"profiler cost: handler ([\d.]+) us median", summary)
    if not found:
        raise BenchError(f"no handler figure in the summary of {program}:\n{summary[-2000:]}")
    return float(found.group(1))


def cmd_async(args):
    work = os.path.join(args.work, "async")
    os.makedirs(work, exist_ok=True)
    program = os.path.join(work, "async_stages")
    subprocess.run(["swiftc", "-O", "-g", "-parse-as-library", "Tests/Programs/async_stages.swift", "-o", program], check=True)
    profile = os.path.join(work, "profile.folded")
    runs = {"1": [], "0": []}
    for _ in range(args.rounds):
        for setting in runs:
            runs[setting].append(_handler_median(program, args.lib, setting, profile))
    for setting, label in (("1", "on: "), ("0", "off:")):
        print(f"handler median, async stacks {label} {lower_median(runs[setting]):g} us (runs: {' '.join(f'{v:g}' for v in runs[setting])})")
    chain = os.path.join(work, "chain")
    build = os.path.dirname(args.lib)
    subprocess.run(["gcc", "-O2", "-I", "Sources/CEngine/include", "Scripts/bench/async_chain.c", "-o", chain, "-L", build,
                    "-lStackSamplerPreload", f"-Wl,-rpath,{build}"], check=True)
    print(subprocess.run([chain], check=True, capture_output=True, text=True).stdout, end="")
