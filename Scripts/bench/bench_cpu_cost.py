"""cpu mode's fixed costs, against their budgets: the sampler thread's share of a core at 100 Hz
(eight busy threads, the summary's own count of the sampler thread's CPU over the run), and the
start-up time the preload library adds to /bin/true when it profiles. With --against, a second
build's library runs in the same rounds, interleaved, so that two builds are compared on one
machine state.

  python3 Scripts/bench/bench.py cpu-cost --work out/bench --lib .build/release/libStackSamplerPreload.so \\
      [--against OTHER/libStackSamplerPreload.so] [--rounds 5] [--seconds 4] [--runs 100]
"""
import os
import re
import shutil
import subprocess

from bench_common import BenchError, LoadMeter, log, median, run_timed, save


def _threads_program(args):
    """The eight-thread workload (Tests/Programs/threads.c): from --bins, else compiled into the
    work directory."""
    if args.bins and os.path.exists(os.path.join(args.bins, "threads")):
        return os.path.join(args.bins, "threads")
    path = os.path.join(args.work, "threads")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Programs", "threads.c")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", path, source], check=True)
    return path


def _blocks_for(program, seconds, tmp):
    """Blocks per thread for about `seconds` of wall time unprofiled (8 threads share the cores)."""
    blocks = 2000
    while True:
        wall, _ = run_timed([program, "--blocks", str(blocks)], {}, os.devnull, os.path.join(tmp, "calibrate.err"))
        if wall >= 0.5:
            return max(1, int(blocks * seconds / wall))
        blocks *= 4


def _sampler_share(program, blocks, lib, tmp):
    """One profiled run at 100 Hz: (sampler thread ms, session seconds, samples) from its summary."""
    summary = os.path.join(tmp, "summary.txt")
    env = {"LD_PRELOAD": lib, "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "10ms",
           "STACKSAMPLER_OUTPUT": os.path.join(tmp, "profile.folded"), "STACKSAMPLER_SUMMARY": summary}
    run_timed([program, "--blocks", str(blocks)], env, os.devnull, os.path.join(tmp, "run.err"))
    with open(summary) as f:
        text = f.read()
    first = re.search(r"stacksampler: (\d+) samples from .* in ([0-9.]+) s", text)
    sampler = re.search(r"sampler thread ([0-9.]+) ms CPU", text)
    if not first or not sampler:
        raise BenchError(f"no sampler figures in the summary:\n{text}")
    return float(sampler.group(1)), float(first.group(2)), int(first.group(1))


def cmd_cpu_cost(args):
    tmp = os.path.join(args.work, "cpu-cost")
    os.makedirs(tmp, exist_ok=True)
    libs = {"this": args.lib}
    if args.against:
        libs["against"] = os.path.abspath(args.against)
    program = _threads_program(args)
    blocks = _blocks_for(program, args.seconds, tmp)
    true = "/bin/true" if os.path.exists("/bin/true") else shutil.which("true")
    shares = {name: [] for name in libs}
    startup = {"none": [], **{name: [] for name in libs}}
    with LoadMeter() as meter:
        for round_index in range(args.rounds):
            for name, lib in libs.items():
                ms, seconds, samples = _sampler_share(program, blocks, lib, tmp)
                # A run three times as long: the difference is the sampler's running cost, without
                # the session's one-time work (the profiler's own unwind tables, the first scan).
                long_ms, long_seconds, _ = _sampler_share(program, 3 * blocks, lib, tmp)
                shares[name].append({"sampler_ms": ms, "seconds": seconds, "samples": samples,
                                     "percent_of_core": ms / 10 / seconds,
                                     "running_percent_of_core": max(0.0, long_ms - ms) / 10 / max(1e-3, long_seconds - seconds)})
            for _ in range(max(1, args.runs // args.rounds)):
                wall, _ = run_timed([true], {}, os.devnull, os.devnull)
                startup["none"].append(wall)
                for name, lib in libs.items():
                    env = {"LD_PRELOAD": lib, "STACKSAMPLER_OUTPUT": os.path.join(tmp, "true-%p.folded")}
                    wall, _ = run_timed([true], env, os.devnull, os.devnull)
                    startup[name].append(wall)
            for entry in os.listdir(tmp):
                if entry.startswith("true-"):
                    os.remove(os.path.join(tmp, entry))
            log(f"cpu-cost: round {round_index + 1}/{args.rounds} done")
    result = {"blocks": blocks, "rounds": args.rounds, "libs": libs, "sampler": shares, "startup_seconds": startup,
              "load": meter.result}
    save(args.work, "cpu_cost.json", result)
    for name in libs:
        percent = median([r["percent_of_core"] for r in shares[name]])
        running = median([r["running_percent_of_core"] for r in shares[name]])
        added = (median(startup[name]) - median(startup["none"])) * 1000
        print(f"{name}: sampler thread at cpu 100 Hz, 8 busy threads: {running:.3f} % of a core running, {percent:.3f} % over a "
              f"whole {args.seconds:g} s run with its one-time work (medians of {args.rounds}; budget 0.2 %); start-up added to /bin/true while profiling: {added:.2f} ms "
              f"(median of {len(startup[name])} against {len(startup['none'])} unprofiled; budget 3 ms)")
    load = meter.result
    print(f"other processes kept {load['other_cores']} of the cores busy over {load['seconds']} s "
          f"(load average {load['loadavg_start']:.1f} at the start, {load['loadavg_end']:.1f} at the end)")
