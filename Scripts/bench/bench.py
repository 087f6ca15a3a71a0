#!/usr/bin/env python3
"""StackSampler's benchmarks, one subcommand per measurement; Scripts/bench.sh runs them all in
order and writes docs/benchmark-report.md. Each can also run alone against a release build.

Subcommands (each reads/writes JSON or text in the work directory, --work, default out/bench):
  machine      facts about the machine (nproc, CPU, kernel, HZ estimate, tool versions)
  calibrate    sizes each workload so one unprofiled run takes about --seconds
  slowdown     interleaved runs of every configuration of every workload (A B C … per round)
  attribution  5-second runs of the split workload under each profiler, shares vs ground truth
  handler      one run at a 30-frame stack depth for the handler-time budget; a bare libunwind walk for reference
  startup      /bin/true with and without the preload library (hyperfine, else own loop)
  engines      cpu mode's perf and timer engines against perf: rates, attribution, slowdown at 1 kHz and at equal
               delivered rates with fixed costs and cost per delivered sample (wall, CPU, the thread's own gaps), page faults
  cpu-cost     cpu mode's fixed costs: the sampler thread's share of a core at 100 Hz, start-up of /bin/true
               profiling; with --against, another build's library in the same interleaved rounds
  wall-cost    wall mode's sampler CPU per thread-tick (1 busy thread at 1 kHz; 100 sleeping + 2 busy at 100 Hz) and
               8 busy threads' slowdown at wall 1 kHz against cpu mode 1 kHz, side by side (Markdown table on stdout)
  settings-cost  wall mode's slowdown at 1 kHz (1 and 8 busy threads, C++ exceptions) as root, as an ordinary user and
               with perf_event_open refused, beside gperftools at 1 kHz; the profiler's CPU with 1,000 sleepers at
               wall and cpu 100 Hz in each setting, over runs of 5 s and each second past them (Markdown table on stdout)
  churn        cpu mode's timer engine on short-lived threads at 10 ms (Tests/Programs/churn.c): churn_fn's samples
               against its CPU / period for threads of 100 us to 200 ms (--repeats runs of about --seconds, default 4)
  eintr        wall mode's bursts program (poll, select, epoll_wait) --runs times at 1 ms and 10 ms with every core
               busy: EINTRs in all the blocking calls (--seconds each run, default 1)
  sampler      the sampler thread's CPU per sample, 4 threads over many distinct stacks at 1 kHz, cpu and wall
               mode (--repeats runs of --seconds, default 10)
  daemon       continuous mode over a long run: each window's cost and the service's resident size (cpu 100 Hz
               for --seconds, default 600; wall 1 kHz for --wall-seconds, default 120)
  async        handler time with and without Swift async stacks (--rounds interleaved runs each), then the
               async chain walk alone
  export       sizes and times of every output format for a synthetic profile of --stacks unique stacks
  calls        invocation tracking in a continuous wall session: the tracker's cost per sample, the
               profiler's share of a core and resident size per window, invocations off and on (--seconds each)
  redis-calls  the same on redis-server under redis-benchmark's load, invocations on (--seconds, default 65, at least 30)
  stripped-names  Debian's xz -9 -T1 (liblzma stripped) on --megabytes of input under StackSampler and under perf:
               the functions' shares, perf's per-address rows summed by the unwind data's function ranges
  report       writes the report (--output) from the JSON files
  report-engines  replaces only the engines section of an existing report (after a lone `engines` run)
  unwind-agreement  the engine's stack walk against libunwind's, frame by frame, on real programs (--repeats runs each)
  report-unwind   writes or replaces the report's unwinding section (after `unwind-agreement`)

--lib defaults to libStackSamplerPreload.so in $STACKSAMPLER_BUILD_DIR, else .build/release.
Everything prints progress to stderr and exits non-zero with a message on the first failure.
"""
import argparse
import os
import subprocess
import sys

from bench_async import cmd_async
from bench_calls import cmd_calls, cmd_redis_calls
from bench_churn import cmd_churn
from bench_common import BenchError, log
from bench_cpu_cost import cmd_cpu_cost
from bench_eintr import cmd_eintr
from bench_daemon import cmd_daemon
from bench_engines import cmd_engines
from bench_export import cmd_export
from bench_measure import cmd_attribution, cmd_calibrate, cmd_handler, cmd_machine, cmd_slowdown, cmd_startup
from bench_report import REPORT, cmd_report, cmd_report_engines
from bench_sampler import cmd_sampler
from bench_stripped import cmd_stripped_names
from bench_unwind import cmd_report_unwind, cmd_unwind_agreement
from bench_settings import cmd_settings_cost
from bench_wall import cmd_wall_cost

COMMANDS = {
    "machine": cmd_machine, "calibrate": cmd_calibrate, "slowdown": cmd_slowdown, "attribution": cmd_attribution,
    "handler": cmd_handler, "startup": cmd_startup, "engines": cmd_engines, "report": cmd_report,
    "report-engines": cmd_report_engines, "cpu-cost": cmd_cpu_cost, "unwind-agreement": cmd_unwind_agreement,
    "report-unwind": cmd_report_unwind,
    "wall-cost": cmd_wall_cost, "settings-cost": cmd_settings_cost, "eintr": cmd_eintr,
    "calls": cmd_calls, "redis-calls": cmd_redis_calls, "churn": cmd_churn,
    "sampler": cmd_sampler, "daemon": cmd_daemon, "async": cmd_async, "export": cmd_export,
    "stripped-names": cmd_stripped_names,
}

# --seconds where a subcommand does not take the slowdown runs' 1.2 s.
DEFAULT_SECONDS = {"sampler": 10.0, "daemon": 600.0, "eintr": 1.0, "churn": 4.0, "redis-calls": 65.0}


def default_lib():
    """libStackSamplerPreload.so of the release build: $STACKSAMPLER_BUILD_DIR, else .build/release."""
    return os.path.join(os.environ.get("STACKSAMPLER_BUILD_DIR") or ".build/release", "libStackSamplerPreload.so")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=list(COMMANDS))
    p.add_argument("--work", default=os.environ.get("BENCH_WORK", "out/bench"),
                   help="directory for JSON results and scratch files (default $BENCH_WORK, else out/bench)")
    p.add_argument("--bins", help="directory with the compiled workloads")
    p.add_argument("--lib", default=default_lib(), help="libStackSamplerPreload.so (default: the release build's)")
    p.add_argument("--seconds", type=float, help="unprofiled run length for slowdown runs (default 1.2); "
                   "run length (sampler, default 10; daemon's cpu run, default 600); thread CPU per run (churn, default 4)")
    p.add_argument("--wall-seconds", type=float, default=120, help="the daemon's wall-mode run")
    p.add_argument("--stacks", type=int, default=100000, help="unique stacks of the synthetic profile (export)")
    p.add_argument("--megabytes", type=int, default=30, help="input of xz (stripped-names)")
    p.add_argument("--attribution-seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds per workload (slowdown, cpu-cost)")
    p.add_argument("--repeats", type=int, default=3, help="runs per profiler (attribution), per program (unwind-agreement), per case (churn)")
    p.add_argument("--runs", type=int, default=300, help="runs per variant (start-up)")
    p.add_argument("--chunks", type=int, default=3, help="alternating hyperfine batches (start-up)")
    p.add_argument("--slow-runs", type=int, default=15, help="runs of perf record /bin/true (start-up)")
    p.add_argument("--workloads", help="comma-separated subset (slowdown)")
    p.add_argument("--max-wait", type=float, default=0, help="seconds this phase may wait in all for a quiet machine")
    p.add_argument("--output", default=REPORT)
    p.add_argument("--against", help="another build's libStackSamplerPreload.so, run in the same rounds (cpu-cost)")
    args = p.parse_args()
    if args.seconds is None:
        args.seconds = DEFAULT_SECONDS.get(args.command, 1.2)
    args.lib = os.path.abspath(args.lib)
    if not os.path.exists(args.lib) and args.command not in ("machine", "calibrate", "report", "report-engines", "report-unwind"):
        log(f"{args.command}: {args.lib} is missing: build it first (swift build -c release), or give --lib")
        sys.exit(1)
    if args.bins:
        args.bins = os.path.abspath(args.bins)
    os.makedirs(args.work, exist_ok=True)
    try:
        COMMANDS[args.command](args)
    except (BenchError, subprocess.CalledProcessError, OSError) as e:
        detail = ""
        if isinstance(e, subprocess.CalledProcessError) and e.stderr:
            detail = "\n" + (e.stderr if isinstance(e.stderr, str) else e.stderr.decode(errors="replace"))[-2000:]
        log(f"{args.command} failed: {e}{detail}")
        sys.exit(1)


if __name__ == "__main__":
    main()
