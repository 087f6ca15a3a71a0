"""eintr: wall mode never cuts a blocking call short, over many runs on a busy machine.

Runs the test suite's bursts program (three threads that burn about 100 us, then block 1 ms in
poll, select or epoll_wait, counting the calls that return EINTR) --runs times at wall 1 ms and
as often at wall 10 ms, while spinning processes keep every core busy, and adds up the calls and
the EINTRs. The suite runs it once per period; this is the many-run figure.

  python3 Scripts/bench/bench.py eintr [--runs 100] [--seconds 1]
"""
import multiprocessing
import os
import re
import subprocess

from bench_common import BenchError, log, run_timed, save

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Programs")


def _spin(stop):
    while not stop.is_set():
        pass


def _bursts(work):
    """The suite's bursts program, compiled into the work directory."""
    path = os.path.join(work, "bursts")
    subprocess.run(["gcc", "-O2", "-pthread", "-I", PROGRAMS, "-o", path, os.path.join(PROGRAMS, "bursts.c")], check=True)
    return path


def cmd_eintr(args):
    tmp = os.path.join(args.work, "eintr")
    os.makedirs(tmp, exist_ok=True)
    program = _bursts(tmp)
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 1)]
    for spinner in spinners:
        spinner.start()
    result = {}
    try:
        for period in ("1ms", "10ms"):
            calls = early = 0
            for run in range(args.runs):
                out = os.path.join(tmp, "bursts.out")
                env = {"LD_PRELOAD": args.lib, "STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": period,
                       "STACKSAMPLER_OUTPUT": os.path.join(tmp, "bursts.folded")}
                run_timed([program, str(args.seconds)], env, out, out + ".err")
                with open(out) as f:
                    text = f.read()
                figures = {key: int(value) for key, value in re.findall(r"^(\w+) (\d+)$", text, re.M)}
                if "bursts" not in figures:
                    raise BenchError(f"bursts printed no figures:\n{text}")
                calls += figures["bursts"]
                early += sum(figures.get(key, 0) for key in ("eintr_poll", "eintr_select", "eintr_epoll"))
                if (run + 1) % 25 == 0:
                    log(f"eintr: wall {period}: {run + 1} runs, {early} EINTR in {calls} blocking calls")
            result[period] = {"runs": args.runs, "calls": calls, "eintr": early}
    finally:
        stop.set()
        for spinner in spinners:
            spinner.join()
    save(args.work, "eintr.json", result)
    for period, figures in result.items():
        print(f"| wall {period}, {figures['runs']} runs of {args.seconds:g} s, every core busy | "
              f"{figures['eintr']} EINTR in {figures['calls']} blocking calls |")
