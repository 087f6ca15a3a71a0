"""Shared by the benchmark steps: errors and progress, JSON results, a clean environment, timed runs, load metering."""
import json
import os
import resource
import shutil
import statistics
import sys
import time


GPERF_LIB = "/usr/lib/x86_64-linux-gnu/libprofiler.so"


SPLIT_FUNCTIONS = ["work_fifty", "work_thirty", "work_twenty"]


# Variables of ours or of the tools that must not leak from the caller's environment.
STRIPPED_ENV_PREFIXES = ("STACKSAMPLER_", "CPUPROFILE", "LD_PRELOAD", "PERF_")


class BenchError(Exception):
    pass


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def load(work, name):
    with open(os.path.join(work, name)) as f:
        return json.load(f)


def save(work, name, data):
    path = os.path.join(work, name)
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_ENV_PREFIXES)}
    return env


def run_timed(argv, extra_env, stdout_path, stderr_path):
    """Runs argv; returns (wall seconds, child CPU seconds). Raises on a non-zero exit."""
    path = shutil.which(argv[0]) if os.sep not in argv[0] else argv[0]
    if path is None:
        raise BenchError(f"{argv[0]} not found")
    env = clean_env()
    env.update(extra_env)
    actions = [
        (os.POSIX_SPAWN_OPEN, 1, stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    start = time.perf_counter()
    pid = os.posix_spawn(path, argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(stderr_path, errors="replace") as f:
            tail = f.read()[-2000:]
        raise BenchError(f"exit status {code} from {' '.join(argv)} (env {extra_env}):\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime


def checksum_of(stdout_path):
    with open(stdout_path) as f:
        for line in f:
            if line.startswith("checksum"):
                return line.split()[1]
    raise BenchError(f"no checksum line in {stdout_path}")


def cpu_busy_seconds():
    """Busy CPU seconds of the whole machine so far (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / ticks


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + mine.ru_utime + mine.ru_stime


def meter_round_load(start):
    """Cores kept busy by other processes since `start` (from cpu_busy_seconds,
    children_cpu_seconds, time.monotonic)."""
    busy, ours, wall = start
    other = (cpu_busy_seconds() - busy) - (children_cpu_seconds() - ours)
    return round(max(0.0, other) / max(time.monotonic() - wall, 1e-9), 2)


class LoadMeter:
    """Average number of cores kept busy by processes other than ours during a phase."""

    def __enter__(self):
        self.busy, self.ours, self.wall = cpu_busy_seconds(), children_cpu_seconds(), time.monotonic()
        self.load_start = os.getloadavg()[0]
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.wall
        other = (cpu_busy_seconds() - self.busy) - (children_cpu_seconds() - self.ours)
        self.result = {"seconds": round(wall, 1), "other_cores": round(max(0.0, other) / max(wall, 1e-9), 2),
                       "loadavg_start": self.load_start, "loadavg_end": os.getloadavg()[0]}
        return False


class QuietGate:
    """Waits, before a round, until other processes leave the cores alone (they share this
    machine: builds, tests), within a total budget of waiting for the phase. Rounds run all
    the same when the budget is spent; their load is recorded and reported."""

    def __init__(self, max_wait, threshold=0.25):
        self.left, self.threshold, self.waited = max_wait, threshold, 0.0

    @staticmethod
    def other_load(seconds=0.5):
        busy = cpu_busy_seconds()
        time.sleep(seconds)
        return (cpu_busy_seconds() - busy) / seconds  # we are idle meanwhile: all of it is others'

    def wait(self):
        load = self.other_load()
        announced = False
        while load > self.threshold and self.left > 0:
            if not announced:
                log(f"waiting for other processes to quieten ({load:.2f} cores busy; {self.left:.0f} s of waiting left)")
                announced = True
            time.sleep(2)
            self.left -= 2.5
            self.waited += 2.5
            load = self.other_load()
        return load


def median(values):
    return statistics.median(values) if values else float("nan")


def lower_median(values):
    """The middle value, or the lower of the two middle ones (the figures' published medians of runs)."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2] if ordered else float("nan")


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]
