"""wall-cost: what wall mode costs, side by side with cpu mode in one run (bench_wall workload).

- the sampler thread's CPU time per thread-tick, and as a share of a core: one busy thread at
  wall 1 kHz, and 100 sleeping threads with 2 busy ones at wall 100 Hz;
- the slowdown of 8 busy threads on the machine's cores at wall 1 kHz against cpu mode (perf
  engine, 1 ms: the same signal rate per CPU-second of each thread) and unprofiled, runs
  interleaved, median over rounds.
Writes wall_cost.json and prints a Markdown table for the report ("Wall mode's cost").
"""
import os
import statistics

from bench_common import log, run_timed, save
from bench_shares import parse_summary


def _env(lib, out, mode, period, engine="auto"):
    return {"LD_PRELOAD": lib, "STACKSAMPLER_OUTPUT": out, "STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": period,
            "STACKSAMPLER_SUMMARY": out + ".summary", "STACKSAMPLER_ENGINE": engine}


def _blocks_per_second(program, tmp):
    """Blocks of bench_work one thread does per CPU-second here."""
    out, err = os.path.join(tmp, "calibrate.out"), os.path.join(tmp, "calibrate.err")
    _, cpu = run_timed([program, "1", "4000", "0"], {}, out, err)
    return 4000 / max(cpu, 1e-3)


def _sampler_run(program, lib, tmp, name, argv, period, rate):
    """One profiled run: (sampler thread ms, thread-ticks) from its summary."""
    target = os.path.join(tmp, f"wall-{name}.folded")
    run_timed([program] + argv, _env(lib, target, "wall", period), target + ".out", target + ".err")
    summary = parse_summary(target + ".summary")
    return summary["sampler_cpu_ms"], summary["threads"] * summary["seconds"] * rate, summary


def _sampler_cost(program, lib, tmp, name, argv, period, rate, blocks_index=1):
    """The sampler thread's cost per thread-tick, from a run and one three times as long: the
    difference is what the ticks cost, without the session's one-time work (the unwind tables of
    the profiler's own modules compiled at its first wake, the first scan)."""
    short_ms, short_ticks, summary = _sampler_run(program, lib, tmp, name, argv, period, rate)
    longer = list(argv)
    longer[blocks_index] = str(int(argv[blocks_index]) * 3)
    long_ms, long_ticks, long_summary = _sampler_run(program, lib, tmp, name + "-long", longer, period, rate)
    per_tick_ms = max(0.0, long_ms - short_ms) / max(1.0, long_ticks - short_ticks)
    threads = summary["threads"]
    return {"sampler_cpu_ms": long_ms, "seconds": long_summary["seconds"], "threads": threads,
            "us_per_thread_tick": per_tick_ms * 1000,
            "core_percent": per_tick_ms * threads * rate / 10,
            "one_time_ms": max(0.0, short_ms - per_tick_ms * short_ticks),
            "whole_run_core_percent": long_ms / 10 / long_summary["seconds"]}


def _median_cost(runs):
    """The run whose cost per thread-tick is the median of `runs` (one pair of runs is noisy: the
    difference of two sessions' CPU), with the range of all of them."""
    per_tick = sorted(run["us_per_thread_tick"] for run in runs)
    median = statistics.median(per_tick)
    chosen = min(runs, key=lambda run: abs(run["us_per_thread_tick"] - median))
    return dict(chosen, us_per_thread_tick=median, core_percent=chosen["core_percent"] * median / max(chosen["us_per_thread_tick"], 1e-9),
                rounds=len(runs), us_range=(per_tick[0], per_tick[-1]))


def cmd_wall_cost(args):
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    program = os.path.join(args.bins, "bench_wall")
    per_second = _blocks_per_second(program, tmp)
    blocks = str(int(per_second * args.seconds))
    result = {
        "one busy thread, wall 1 kHz": _median_cost(
            [_sampler_cost(program, args.lib, tmp, "one", ["1", blocks, "0"], "1ms", 1000) for _ in range(args.rounds)]),
        "100 sleeping + 2 busy threads, wall 100 Hz": _median_cost(
            [_sampler_cost(program, args.lib, tmp, "sleepers", ["2", blocks, "100"], "10ms", 100) for _ in range(args.rounds)]),
    }
    cores = os.cpu_count() or 1
    eight = ["8", str(int(per_second * args.seconds * cores / 8)), "0"]
    configurations = {"unprofiled": None, "cpu 1 kHz (perf engine)": ("cpu", "1ms", "perf"), "wall 1 kHz": ("wall", "1ms")}
    times = {name: [] for name in configurations}
    for round_index in range(args.rounds):
        names = list(configurations)
        names = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in names:
            target = os.path.join(tmp, "eight.folded")
            env = _env(args.lib, target, *configurations[name]) if configurations[name] else {}
            wall, _ = run_timed([program] + eight, env, target + ".out", target + ".err")
            times[name].append(wall)
        log(f"wall-cost: round {round_index + 1}: " + ", ".join(f"{n} {times[n][-1]:.3f} s" for n in names))
    baseline = times["unprofiled"]
    result["8 busy threads, slowdown"] = {
        name: statistics.median((t / b - 1) * 100 for t, b in zip(times[name], baseline)) for name in configurations if name != "unprofiled"}
    save(args.work, "wall_cost.json", result)
    one, sleepers = result["one busy thread, wall 1 kHz"], result["100 sleeping + 2 busy threads, wall 100 Hz"]
    slowdown = result["8 busy threads, slowdown"]
    print("| figure | measured | budget |\n|---|---|---|")
    for label, figures, budget in ((f"one busy thread at wall 1 kHz ({one['threads']} threads)", one, "≤ 3 µs, ≤ 0.5 %"),
                                   ("100 sleeping + 2 busy threads at wall 100 Hz", sleepers, "≤ 0.5 %")):
        low, high = figures["us_range"]
        print(f"| sampler thread, {label} | {figures['us_per_thread_tick']:.2f} µs per thread-tick (median of {figures['rounds']} pairs of "
              f"runs, {low:.2f}–{high:.2f}), {figures['core_percent']:.2f} % of a core (whole run with its one-time "
              f"{figures['one_time_ms']:.1f} ms: {figures['whole_run_core_percent']:.2f} %) | {budget} |")
    print(f"| 8 busy threads on {cores} cores, slowdown (median of {args.rounds} interleaved rounds) | wall 1 kHz "
          f"{slowdown['wall 1 kHz']:+.1f} %, cpu 1 kHz {slowdown['cpu 1 kHz (perf engine)']:+.1f} % | wall ≤ cpu + 1 % |")
