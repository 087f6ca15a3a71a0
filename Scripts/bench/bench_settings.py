"""settings-cost: what wall mode costs in each setting users run it in, side by side with
gperftools' CPU profiler (setitimer, which every setting allows) in one run.

Settings: root; an ordinary user (uid 65534, `perf_event_open` allowed on its own threads at
`perf_event_paranoid` 2); the same user behind a seccomp filter that refuses `perf_event_open`
with EACCES (Debian's and Ubuntu's paranoid 3 and 4, a container's profile). Each setting's
profiled runs are compared with unprofiled runs under the same launchers, interleaved round by
round, medians over rounds:
- slowdown at wall 1 kHz of one busy thread and of 8 busy threads on the machine's cores
  (bench_wall), and of C++ exceptions thrown through 10 frames (bench_exceptions), against
  gperftools at 1 kHz (root): the budget is gperftools' slowdown + 1 % for the busy threads,
  10 % for the exceptions; and wall's slowdown less gperftools', paired round by round (the
  machine's drift leaves both alike), median and quartiles, for the verdict on that budget. Each
  is given for the whole run and for the work alone (each round also runs the work cut to a few
  ms, and what that run costs, paid once by every process, is left out), with that once-per-run
  cost in ms;
- 1,000 threads that sleep 50 ms at a time (bench_sleepers): the profiler's CPU (the process's
  CPU time less the unprofiled run's) as a share of a core at wall 100 Hz (budget 2 %) and cpu
  100 Hz (budget 1 %), over runs of 5 s and per second past the first 5 (runs of 15 s against 5),
  each run against the unprofiled run of its round: median and quartiles of the rounds.
Writes settings_cost.json and prints a Markdown table for the report.
"""
import os
import shutil
import statistics
import tempfile

from bench_common import log, run_timed, save

SETTINGS = ("root", "unprivileged", "perf refused")
NOBODY = "65534"
GPERFTOOLS = "/usr/lib/x86_64-linux-gnu/libprofiler.so"


def _readable_copy(args):
    """The workloads, the launcher and the libraries, copied where the ordinary user can read
    them (the checkout may sit in a folder it cannot enter); outputs go there too."""
    place = tempfile.mkdtemp(prefix="stacksampler-settings-")
    os.chmod(place, 0o777)
    library_dir = os.path.dirname(args.lib)
    for name in os.listdir(library_dir):
        if name.startswith("libStackSampler") and name.endswith(".so"):
            shutil.copy(os.path.join(library_dir, name), place)
    for name in ("bench_wall", "bench_exceptions", "bench_sleepers", "deny_perf_events"):
        shutil.copy(os.path.join(args.bins, name), place)
    return place


def _argv(place, setting, argv):
    """`argv` as it runs in `setting`: as it is for root, else behind setpriv (and the filter)."""
    if setting == "root":
        return argv
    launcher = ["/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    if setting == "perf refused":
        launcher += [os.path.join(place, "deny_perf_events"), "--errno", "EACCES"]
    return launcher + argv


def _profiler_env(place, profiler, mode="wall", period="1ms"):
    """The environment that profiles a run with `profiler` (stacksampler or gperftools)."""
    if profiler == "none":
        return {}
    if profiler == "gperftools":
        return {"LD_PRELOAD": GPERFTOOLS, "CPUPROFILE": os.path.join(place, "gperftools.prof"), "CPUPROFILE_FREQUENCY": "1000"}
    return {"LD_PRELOAD": os.path.join(place, "libStackSamplerPreload.so"), "STACKSAMPLER_MODE": mode,
            "STACKSAMPLER_PERIOD": period, "STACKSAMPLER_OUTPUT": "/dev/null"}


def _run(place, setting, argv, env):
    """One run: (wall seconds, CPU seconds of the process). The environment reaches the program
    through env, past the launchers, so that neither is profiled."""
    assignments = [f"{key}={value}" for key, value in sorted(env.items())]
    out, err = os.path.join(place, "run.out"), os.path.join(place, "run.err")
    return run_timed(_argv(place, setting, ["/usr/bin/env"] + assignments + argv), {}, out, err)


def _sized(place, program, make_argv, seconds):
    """(`make_argv(n)` for the n whose unprofiled run takes about `seconds`, `make_argv(1000)`: the
    same work cut to a run of a few ms, which costs what a run costs once, whatever its length)."""
    tiny = make_argv(1000)
    wall, _ = _run(place, "root", tiny, {})
    return make_argv(max(1000, int(1000 * seconds / max(wall, 1e-3)))), tiny


def _quartiles(values):
    """Median and quartiles of `values`, as the tables print them."""
    quartiles = statistics.quantiles(values, n=4)
    return {"median": statistics.median(values), "low": quartiles[0], "high": quartiles[2]}


def _slowdowns(place, name, argvs, rounds):
    """Slowdowns (%) of gperftools and of wall 1 kHz in each setting, against unprofiled runs under
    the same launchers, all interleaved, each round also running the work cut to a few ms (`argvs`:
    the full run and the tiny one). For each configuration: the whole run's slowdown (median over
    the rounds); what a run pays once (`once`, ms: the tiny run's wall less the unprofiled one's of
    the same round: start-up, the tables, the profile written at exit); and the work's own slowdown
    (`work`: the full run less the tiny one, against the same difference unprofiled, so that what
    every process pays once is left out, as for a service that runs for hours). For each setting,
    wall's slowdown less gperftools' in the same round, whole run (`over`) and work (`over work`),
    median and quartiles of the rounds: the budget (gperftools' + 1 %) is about that difference, and
    pairing by round leaves out the machine's drift from one minute to the next."""
    full, tiny = argvs
    configurations = [("root", "gperftools")] + [(setting, profiler) for setting in SETTINGS
                                                  for profiler in ("none", "stacksampler")]
    walls = {configuration: [] for configuration in configurations}
    tinies = {configuration: [] for configuration in configurations}
    for round_index in range(rounds):
        for setting, profiler in configurations:
            env = _profiler_env(place, profiler)
            walls[(setting, profiler)].append(_run(place, setting, full, env)[0])
            tinies[(setting, profiler)].append(_run(place, setting, tiny, env)[0])
        log(f"settings-cost: {name} round {round_index + 1} of {rounds}")
    def slowdown(setting, profiler, index):
        return 100 * (walls[(setting, profiler)][index] / walls[(setting, "none")][index] - 1)
    def work_slowdown(setting, profiler, index):
        def work(configuration):
            return walls[configuration][index] - tinies[configuration][index]
        return 100 * (work((setting, profiler)) / work((setting, "none")) - 1)
    def once(setting, profiler, index):
        return 1000 * (tinies[(setting, profiler)][index] - tinies[(setting, "none")][index])
    gperf = ("root", "gperftools")
    result = {"gperftools": {"run": statistics.median(slowdown("root", "gperftools", i) for i in range(rounds)),
                             "work": statistics.median(work_slowdown("root", "gperftools", i) for i in range(rounds)),
                             "once": statistics.median(once(*gperf, i) for i in range(rounds))},
              "over": {}, "over work": {}}
    for setting in SETTINGS:
        result[setting] = {"run": statistics.median(slowdown(setting, "stacksampler", i) for i in range(rounds)),
                           "work": statistics.median(work_slowdown(setting, "stacksampler", i) for i in range(rounds)),
                           "once": statistics.median(once(setting, "stacksampler", i) for i in range(rounds))}
        result["over"][setting] = _quartiles([slowdown(setting, "stacksampler", i) - slowdown(*gperf, i) for i in range(rounds)])
        result["over work"][setting] = _quartiles([work_slowdown(setting, "stacksampler", i) - work_slowdown(*gperf, i)
                                                   for i in range(rounds)])
    return result


def _sleeper_costs(place, sleepers, lengths, rounds):
    """The profiler's CPU as a share of a core (%) with the sleepers, wall and cpu mode at 100 Hz,
    in each setting: the process's CPU time less that of the unprofiled run of the same round,
    over the run's length (`run`, runs of lengths[0] seconds), and per second past the first
    run's length (`steady`: runs of lengths[1] against lengths[0] of the same round, so that what
    every run costs once, whatever its length, is left out: the threads' attach and names, the
    profile written). Each the median of the rounds, with the rounds' quartiles (`low`, `high`)."""
    short, long = lengths
    result = {}
    for setting in SETTINGS:
        cpu = {(mode, length): [] for mode in ("none", "wall", "cpu") for length in lengths}
        for _ in range(rounds):
            for length in lengths:
                argv = [sleepers, "1000", "50", str(length)]
                cpu[("none", length)].append(_run(place, setting, argv, {})[1])
                for mode in ("wall", "cpu"):
                    cpu[(mode, length)].append(_run(place, setting, argv, _profiler_env(place, "stacksampler", mode, "10ms"))[1])
        def extra(mode, length, index):
            return cpu[(mode, length)][index] - cpu[("none", length)][index]
        result[setting] = {}
        for mode in ("wall", "cpu"):
            shares = {"run": [100 * extra(mode, short, i) / short for i in range(rounds)],
                      "steady": [100 * (extra(mode, long, i) - extra(mode, short, i)) / (long - short) for i in range(rounds)]}
            result[setting][mode] = {}
            for kind, values in shares.items():
                result[setting][mode][kind] = _quartiles(values)
        log(f"settings-cost: sleepers as {setting}: " + ", ".join(
            f"{mode} {result[setting][mode]['run']['median']:.2f} % ({short} s runs), {result[setting][mode]['steady']['median']:.2f} % steady"
            for mode in ("wall", "cpu")))
    return result


def cmd_settings_cost(args):
    place = _readable_copy(args)
    try:
        wall, exceptions = os.path.join(place, "bench_wall"), os.path.join(place, "bench_exceptions")
        cores = os.cpu_count() or 2
        workloads = {
            "1 busy thread": _sized(place, wall, lambda n: [wall, "1", str(n), "0"], args.seconds),
            f"8 busy threads on {cores} cores": _sized(place, wall, lambda n: [wall, "8", str(max(1, n // 8)), "0"], args.seconds),
            "C++ exceptions through 10 frames": _sized(place, exceptions, lambda n: [exceptions, str(n * 10), "10"], args.seconds),
        }
        slowdowns = {name: _slowdowns(place, name, argv, args.rounds) for name, argv in workloads.items()}
        sleepers = _sleeper_costs(place, os.path.join(place, "bench_sleepers"), (5, 15), max(3, args.rounds // 4))
    finally:
        shutil.rmtree(place, ignore_errors=True)
    save(args.work, "settings_cost.json", {"slowdowns": slowdowns, "sleepers": sleepers, "rounds": args.rounds})
    def cell(result):
        return f"{result['run']:+.1f} % run, {result['work']:+.1f} % work, {result['once']:.0f} ms once"
    print("| workload | gperftools 1 kHz | " + " | ".join(f"wall 1 kHz, {setting}" for setting in SETTINGS) + " |")
    print("|---|---|" + "---|" * len(SETTINGS))
    for name, result in slowdowns.items():
        print(f"| {name} | {cell(result['gperftools'])} | " + " | ".join(cell(result[s]) for s in SETTINGS) + " |")
    print()
    for key, words in (("over", "whole run"), ("over work", "the work, once-per-run costs left out")):
        print(f"| wall 1 kHz's slowdown less gperftools', {words}, paired by round: median (quartiles) | "
              + " | ".join(SETTINGS) + " |")
        print("|---|" + "---|" * len(SETTINGS))
        for name, result in slowdowns.items():
            over = result[key]
            print(f"| {name} | " + " | ".join(f"{over[s]['median']:+.1f} ({over[s]['low']:+.1f} to {over[s]['high']:+.1f})" for s in SETTINGS) + " |")
        print()
    print("| 1,000 threads sleeping 50 ms at a time: the profiler's CPU, share of a core | " + " | ".join(SETTINGS) + " |")
    print("|---|" + "---|" * len(SETTINGS))
    for mode in ("wall", "cpu"):
        for kind, words in (("run", "runs of 5 s"), ("steady", "each second past the first 5")):
            print(f"| {mode} 100 Hz, {words} | " + " | ".join(
                f"{sleepers[s][mode][kind]['median']:.2f} % ({sleepers[s][mode][kind]['low']:.2f} to {sleepers[s][mode][kind]['high']:.2f})"
                for s in SETTINGS) + " |")
